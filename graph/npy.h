/* NumPy .npy files: the one reader and writer in tgc.
 *
 * Follows the NumPy format specification (numpy/lib/format.py, "NEP 1"):
 * magic "\x93NUMPY", major.minor version (1.0: 2-byte header length; 2.0:
 * 4-byte; 3.0: 4-byte, UTF-8 header), then a Python dict literal with keys
 * 'descr', 'fortran_order' and 'shape', padded with spaces to a multiple of
 * 64 bytes and ended by '\n', then the raw data.
 *
 * Example usage:
 *     tgc_npy a;
 *     if (tgc_npy_read_file("w.npy", &a, err, sizeof err) != TGC_OK) ...
 *     // a.dtype == TGC_FLOAT32, a.rank, a.dims[], a.data (a.nbytes bytes)
 *     tgc_npy_release(&a);
 */
#ifndef TGC_GRAPH_NPY_H
#define TGC_GRAPH_NPY_H

#include "tgc.h"

#include <stdbool.h>

#define TGC_NPY_MAX_RANK 8

typedef struct tgc_npy {
    tgc_dtype dtype;
    int rank;                      /* 0 for a scalar */
    int64_t dims[TGC_NPY_MAX_RANK];
    void *data;                    /* C-order, little-endian; owned (tgc_malloc) */
    size_t nbytes;                 /* product(dims) * tgc_dtype_size(dtype) */
    /* Reader's state while a text array's raw elements are in `data` (4:
     * '<U' UTF-32, 1: '|S' bytes; text_width units each); 0 once `data`
     * holds string slots, and in every array the reader returns. */
    int text_unit;
    size_t text_width;
} tgc_npy;

/* Parses a whole .npy image of `size` bytes at `bytes`. Accepted descr
 * (type strings): '<f4' '<f2' '<f8' '<i2' '<i4' '<i8' '<u2' '<u4' '<u8' and
 * '|i1' '|u1' '|b1' (bfloat16 has no NumPy dtype: never read, and refused
 * by the writers, TGC_ERR_INVALID), and text: '<U{n}' (UTF-32LE, n code
 * points an element, trailing NULs padding) and '|S{n}' (n bytes, trailing
 * NULs padding), both read as TGC_STRING: `data` then holds numel `char *`
 * slots, each NULL ("") or a tgc_malloc'd UTF-8 string owned by the array
 * (support/string_slots.h; a NUL inside an element ends its string; a
 * '<U' unit that is not a Unicode scalar value is an error); the multi-byte
 * ones also with the native marks '=' or '|' or none (little-endian hosts),
 * the one-byte ones with any order mark. fortran_order must be False, rank
 * <= TGC_NPY_MAX_RANK, and the data exactly product(dims) * element size
 * bytes. Format versions 1.0, 2.0 and 3.0; headers up to 1 MiB, parsed as a
 * Python dict literal (any key order, either quote, trailing commas).
 * Big-endian data, Fortran order, structured or unknown dtypes, malformed
 * headers, truncated data and extra bytes after the data are errors.
 * On success fills *out (caller releases with tgc_npy_release) and returns
 * TGC_OK. On failure writes a one-line reason (no file name, e.g. "data is
 * truncated: expected 256 bytes, found 100") into err[0..err_size) (err may
 * be NULL) and returns TGC_ERR_INVALID, or TGC_ERR_NOMEM. *out is then
 * zeroed. Safe on arbitrary bytes. */
tgc_status tgc_npy_parse(const void *bytes, size_t size, tgc_npy *out, char *err, size_t err_size);

/* Reads and parses the file at `path`, reading the data straight into its
 * buffer. A file that cannot be opened gives TGC_ERR_IO with strerror's
 * reason alone in err ("No such file or directory"); a failed read gives
 * TGC_ERR_IO with "read failed: REASON"; otherwise as tgc_npy_parse. */
tgc_status tgc_npy_read_file(const char *path, tgc_npy *out, char *err, size_t err_size);

/* As tgc_npy_read_file, from the open descriptor `fd`, which it takes over
 * (closed on return, success or not): for files opened beneath a model's
 * folder (support/open_beneath.h). On a regular file the data size the
 * header claims is checked against the bytes the file holds before any
 * allocation for it. */
tgc_status tgc_npy_read_fd(int fd, tgc_npy *out, char *err, size_t err_size);

/* Writes `a` as a version 1.0 .npy file (version 2.0 if the header would not
 * fit in 65535 bytes) at `path`, byte for byte as np.save writes the same
 * array. A TGC_STRING array (slots as the reader gives them) is written
 * as np.save writes np.array(list_of_str): '<U{n}', n the most code points
 * of any element (at least 1), UTF-32LE, NUL-padded (bytes that are not
 * UTF-8 become U+FFFD). The file is written to a temporary name in the same directory,
 * synced, and renamed into place, so a failure never leaves a half-written
 * file (the temporary is removed). Returns TGC_OK; TGC_ERR_IO with the reason
 * in err; TGC_ERR_INVALID if `a` is inconsistent (unknown dtype, rank out of
 * range, negative dim, nbytes not matching dims, NULL data with nbytes > 0);
 * or TGC_ERR_NOMEM. */
tgc_status tgc_npy_write_file(const char *path, const tgc_npy *a, char *err, size_t err_size);

/* Serialises `a` as tgc_npy_write_file would write it into a new
 * tgc_malloc'd buffer (*bytes, *size) owned by the caller. Returns TGC_OK,
 * TGC_ERR_INVALID if `a` is inconsistent (as above) or TGC_ERR_NOMEM; on
 * failure *bytes is NULL and *size 0. */
tgc_status tgc_npy_serialize(const tgc_npy *a, void **bytes, size_t *size);

/* Frees a->data (a string array's strings too) and zeroes *a; safe on a
 * zeroed struct. */
void tgc_npy_release(tgc_npy *a);

#endif
