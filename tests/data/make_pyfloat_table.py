"""Generate pyfloat_table.txt: `<f64 bits hex> <Python repr(float)>` per line.

Run with the oracle venv: .oracle-venv/bin/python make_pyfloat_table.py
Deterministic (fixed seed)."""
import random, struct, math, os

rng = random.Random(20261129)
vals = [0.0, -0.0, 1.0, -1.0, 0.1, 0.8, 2.5, 0.75, -5.25, 20.5, 1e16, 1e15, 9999999999999998.0,
        1e17, 1e-4, 1e-5, 0.00012, 123456789012345678.0, 5e-324, -5e-324, 2.2250738585072014e-308,
        1.7976931348623157e308, float('inf'), float('-inf'), float('nan'), 0.800000011920929,
        1/3, 2/3, 100.0, 1e22, 1e23, 1e-7, 1.5e300, 1e100, 123.456, 0.3, 4.35, 0.001, 0.0001]
for e in range(-330, 310):
    for m in (1.0, 9.999999999999999, 2.5):
        try:
            vals.append(float(f"{m}e{e}"))
        except OverflowError:
            pass
for _ in range(1200):
    bits = rng.getrandbits(64)
    vals.append(struct.unpack('<d', struct.pack('<Q', bits))[0])
for _ in range(400):
    vals.append(rng.uniform(-1e6, 1e6))
for _ in range(200):
    vals.append(float(rng.randint(-2**60, 2**60)))
for _ in range(200):
    vals.append(struct.unpack('<f', struct.pack('<I', rng.getrandbits(32)))[0])
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'pyfloat_table.txt')
with open(out, 'w') as f:
    for v in vals:
        bits = struct.unpack('<Q', struct.pack('<d', v))[0]
        if math.isnan(v):
            bits = 0x7ff8000000000000
        f.write(f"{bits:016x} {repr(v)}\n")
