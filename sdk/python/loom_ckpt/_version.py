# loom's version (configure.ac's AC_INIT): configure stops when they differ.
__version__ = "0.1.0"
