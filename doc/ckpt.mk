# ckpt man pages.
dist_man_MANS += doc/loom-ckpt.1 doc/spank_ckpt.8 doc/job_submit_loom.8
