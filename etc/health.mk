# health sample configs: appended by the health part.
