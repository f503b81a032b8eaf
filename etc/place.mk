# place sample configs: appended by the place part.
