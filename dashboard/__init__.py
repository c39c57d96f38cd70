"""relidash: a reliability dashboard (pass@k and pass^k) over multivon-eval reports."""

import os

# One BLAS thread. The bootstrap's matrix products are small (8 x 50 by 50 x 2000): extra
# BLAS threads only spin, and on a cold load they take a core from DuckDB's parse and the
# metrics worker for nothing. It also fixes the order of the products' sums,
# so the last bit of an interval does not depend on the machine's core count. Set before
# numpy is imported; `relidash serve` passes it on to Streamlit.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
