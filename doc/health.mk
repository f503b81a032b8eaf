# health man pages: appended by the health part.
