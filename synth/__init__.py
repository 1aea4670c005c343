"""Z3 sketch synthesis: holes, constraints and CEGIS repair of a localized snippet."""
