# lib/health: see issue; sources are added here.
