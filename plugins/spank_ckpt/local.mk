# spank_ckpt
