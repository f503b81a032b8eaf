# lib/ckpt: see issue; sources are added here.
