"""The C++ front-end: clang (libclang) reads the source as the vendor compiler would.

``driver`` parses a source of any platform with clang against the virtual device's own runtime
headers (the same prefix the emulator builds with) and maps clang's errors to coded diagnostics
with the source's coordinates.
"""
