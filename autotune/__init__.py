"""Search over pass sequences and parameters, measurement, cost models, vendor baselines."""
