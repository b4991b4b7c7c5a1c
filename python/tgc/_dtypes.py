"""tgc's dtypes (tgc_dtype codes) beside NumPy's."""
import numpy as np

FLOAT32, FLOAT16, INT32, INT64, UINT8, BOOL, FLOAT64, INT8, INT16, UINT16, UINT32, UINT64, BFLOAT16, STRING = range(14)

NAMES = ["float32", "float16", "int32", "int64", "uint8", "bool", "float64", "int8", "int16", "uint16", "uint32",
         "uint64", "bfloat16", "string"]

# tgc code -> numpy dtype (bfloat16 has none: read back as float32; strings as object arrays of str)
TO_NUMPY = {FLOAT32: np.dtype(np.float32), FLOAT16: np.dtype(np.float16), INT32: np.dtype(np.int32),
            INT64: np.dtype(np.int64), UINT8: np.dtype(np.uint8), BOOL: np.dtype(np.bool_),
            FLOAT64: np.dtype(np.float64), INT8: np.dtype(np.int8), INT16: np.dtype(np.int16),
            UINT16: np.dtype(np.uint16), UINT32: np.dtype(np.uint32), UINT64: np.dtype(np.uint64)}

FROM_NUMPY = {v: k for k, v in TO_NUMPY.items()}


def from_numpy(dt):
    """The tgc code of numpy dtype `dt`; strings (U, S, O) are STRING. ValueError for others."""
    dt = np.dtype(dt)
    if dt.kind in "USO":
        return STRING
    code = FROM_NUMPY.get(dt.newbyteorder("=") if dt.byteorder not in "=|" else dt)
    if code is None:
        raise ValueError("tgc has no dtype for numpy's %s (tgc's: %s)" % (dt, ", ".join(NAMES)))
    return code


def name(code):
    return NAMES[code] if 0 <= code < len(NAMES) else "invalid"
