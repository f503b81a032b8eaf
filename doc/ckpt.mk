# ckpt man pages: appended by the ckpt part.
