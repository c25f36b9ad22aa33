"""humanoid_balance: balance control for humanoids with serial-parallel hybrid legs."""
import os

__version__ = "0.1.0"

# The suite's linear algebra runs on matrices of tens of rows, where BLAS worker threads cost more than they give,
# and its processes share a few cores: one thread each (a value the user sets is kept; numpy reads it at import).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
