#!/usr/bin/env python3
"""Makes the .npy files of tests/cli/test_strings.sh with numpy, the
independent reference (run with /usr/bin/python3 from this folder).

x.npy        '<U'  words for StringNormalizer (UTF-8 beyond ASCII too)
y_ref.npy    '<U'  x without the stopword 'monday' (compared ignoring case),
                   upper-cased by Python's str.upper (no ß: Python maps it to
                   'SS', two code points, which a simple mapping cannot)
n.npy        '|S'  byte strings of numbers (numpy's np.bytes_ array; NaN and
                   infinities are in ONNX's test_cast_STRING_to_FLOAT: --compare
                   counts a NaN as a difference)
f_ref.npy    '<f4' n.astype(np.float32)
s_ref.npy    '<U'  f_ref.astype(str): numpy's str() of each float32
bad_n.npy    '<U'  like n, one element not a number (numpy's astype raises)
y_wrong.npy  '<U'  y_ref with its last string changed
"""
import numpy as np

words = ['Monday', 'tuesday', 'Grüne', 'σίσυφος', 'MONDAY', 'été', '']
x = np.array(words)
np.save('x.npy', x)
stop = {'monday'}
kept = [w.upper() for w in words if w.lower() not in stop]
np.save('y_ref.npy', np.array(kept))

n = np.array([b'1.5', b'-2', b'0.1', b'1e-7', b' 3.25 ', b'-0.0', b'123456789'])  # NaN, inf: in the conformance data
np.save('n.npy', n)
f = n.astype(np.float32)
np.save('f_ref.npy', f)
np.save('s_ref.npy', f.astype(str))

bad = np.array(['1', '2', '3', 'four', '5', '6', '7'])
np.save('bad_n.npy', bad)
np.save('y_wrong.npy', np.array(kept[:-1] + ['x']))
