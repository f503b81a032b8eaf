# lib/place: see issue; sources are added here.
