"""Data package: the AVX-512 VNNI corpus (<name>.cpp + <name>.json), see ../README.md."""
