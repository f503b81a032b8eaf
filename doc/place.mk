# place man pages: appended by the place part.
