"""Decode-shaped sdpa (L=1, 32 query heads over 4 key/value heads, enable_gqa, D=128) against PyTorch, issue 12:
single calls of ours (default dispatch: flash:cpu) and torch interleaved for `secs` seconds, wall time (meant for
two threads, where thread time does not apply); prints median, lower quartile and best of each, the ratio of the
medians, the median of the per-pair ratios, how many pairs fell under 1.5x, and the load average before and after
(the machine is shared: a burst of other work deschedules one of the two team threads and adds a scheduler time
slice, ~4-5 ms, to both libraries' calls alike). Not a test.
Run: PYTHONPATH=python /work/.venv-peers/bin/python bench/sdpa_decode_threads.py THREADS S[,S..] [secs] [f32,bf16]"""
import sys, time, statistics, os
import ml_dtypes, numpy as np, torch
import backplane as bp
from backplane.nn import functional as F
rng = np.random.default_rng(0)
thr = int(sys.argv[1]); Ss = [int(x) for x in sys.argv[2].split(",")]; secs = float(sys.argv[3]) if len(sys.argv) > 3 else 3
dts = sys.argv[4].split(",") if len(sys.argv) > 4 else ["f32", "bf16"]
bp.set_num_threads(thr); torch.set_num_threads(thr)
print("load", os.getloadavg())
for S in Ss:
    for dt in dts:
        q = rng.standard_normal((1, 32, 1, 128), dtype=np.float32)
        k = rng.standard_normal((1, 4, S, 128), dtype=np.float32)
        v = rng.standard_normal((1, 4, S, 128), dtype=np.float32)
        if dt == "bf16":
            q, k, v = (x.astype(ml_dtypes.bfloat16) for x in (q, k, v))
            tq, tk, tv = (torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16) for x in (q, k, v))
        else:
            tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        bq, bk, bv = (bp.asarray(x) for x in (q, k, v))
        ours = lambda: F.scaled_dot_product_attention(bq, bk, bv, enable_gqa=True)
        theirs = lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
        for f in (ours, theirs): f(); f()
        a, b = [], []
        t_end = time.perf_counter() + secs
        while time.perf_counter() < t_end:
            t0 = time.perf_counter(); ours(); t1 = time.perf_counter()
            theirs(); t2 = time.perf_counter()
            a.append(t1 - t0); b.append(t2 - t1)
        pr = sorted(y / x for x, y in zip(a, b))
        q25 = lambda xs: sorted(xs)[len(xs) // 4]
        print(f"thr={thr} S={S:6} {dt:5} ours med {statistics.median(a)*1e6:7.0f} q25 {q25(a)*1e6:7.0f} min {min(a)*1e6:7.0f} us | torch med {statistics.median(b)*1e6:7.0f} q25 {q25(b)*1e6:7.0f} min {min(b)*1e6:7.0f} | ratio of medians {statistics.median(b)/statistics.median(a):5.2f} median pair ratio {statistics.median(pr):5.2f}, pairs <1.5x: {sum(r < 1.5 for r in pr)}/{len(pr)}", flush=True)
print("load", os.getloadavg())
