#!/usr/bin/env python3
"""dramcheck.py SEED: draw 40 launches at the L2's edge for a held-out check
of the DRAM level and the time model (issue 13): four of each of ten kernels,
fields drawn from what the kernel takes, n drawn so the launch's buffers hold
4 MB to 512 MB (log-uniform, the regime where the L2's capacities decide the
DRAM traffic). Written to standard output as JSON lines; the first lines are
comments naming the seed. runs/dramcheck2-specs.jsonl is seed 20261202,
drawn after the busy write-back fit; the first check, dramcheck-specs.jsonl,
came from an earlier one-off draw of the same kind."""
import json, math, random, sys

seed = int(sys.argv[1])
rng = random.Random(seed)
KERNELS = ["coalesced_copy", "update_x_aos", "update_x_soa", "gather_copy", "strided_copy",
           "strided_write", "strided_read", "sum_fields_aos", "vectorized_copy", "offset_copy"]


def footprint_per_n(spec):
    k = spec["kernel"]
    e = spec.get("elem_bytes", 4)
    return {"coalesced_copy": 2 * e, "strided_copy": 2 * e, "offset_copy": 2 * e, "strided_write": e,
            "strided_read": e, "update_x_aos": spec.get("struct_bytes", 16), "update_x_soa": 4,
            "gather_copy": 12, "vectorized_copy": 8,
            "sum_fields_aos": spec.get("struct_bytes", 16) + 4}[k]


print(f"# dramcheck: 40 launches drawn by runs/dramcheck.py {seed}, footprints from 4 MB")
print("# to 512 MB, which no fit saw: a held-out check of the DRAM level and the time model.")
for _ in range(4):
    for k in KERNELS:
        s = {"kernel": k}
        if k in ("coalesced_copy",):
            s["elem_bytes"] = rng.choice([1, 2, 4, 8, 16])
        if k in ("strided_copy", "strided_write", "strided_read"):
            s["stride"] = rng.choice([2, 3, 4, 8, 16, 32])
        if k == "offset_copy":
            s["offset"] = rng.choice([1, 2, 3, 8, 16, 31])
        if k == "update_x_aos":
            s["struct_bytes"] = rng.choice([8, 16, 32, 64])
        if k == "sum_fields_aos":
            s["struct_bytes"] = rng.choice([16, 32, 64])
        if k == "vectorized_copy":
            s["width"] = rng.choice([2, 4])
        if k == "gather_copy":
            s["index_pattern"] = rng.choice(["random", "random_perm", "sorted_random"])
        fp = math.exp(rng.uniform(math.log(4e6), math.log(512e6)))
        n = int(fp / footprint_per_n(s)) // 64 * 64
        s = {"kernel": k, "n": n, **{a: b for a, b in s.items() if a != "kernel"}}
        print(json.dumps(s, separators=(",", ":")))
