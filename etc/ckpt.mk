# ckpt sample configs: appended by the ckpt part.
