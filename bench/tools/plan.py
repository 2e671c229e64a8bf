#!/usr/bin/python3
"""Turns the workload job files (bench/jobs/*.fio) into the plan of rows that the guest runs.

Each job file is an ordinary fio job file that takes its parameters from the environment
(${DEV}, ${SIZE}, ${BS}, ${QD}, ...), with `; @key value` directives in its comment header:

  @title T              human title
  @metric bw|iops|lat   the figure whose rraid/md ratio decides the row (lat: md's p50 and p99
                        over rraid's, the worse of the two)
  @levels L...          RAID levels the workload runs on (0 1 4 5 6 10)
  @members L:N,N ...    member counts per level (default: LEVELS below)
  @chunks L:C,C ...     chunk sizes per level (default: LEVELS below)
  @vary VAR=a,b ...     the rows: cartesian product of the listed values; BS, QD and JOBS fill
                        their CSV columns, any other variable the variant column
  @fixed VAR=v ...      constant values (BS, QD, JOBS columns or fio variables)
  @default FILTER       rows of the default `make bench` (several lines: their union). FILTER is
                        words key=v1,v2 over level, members, chunk and the @vary variables; a row
                        whose members/chunk the filter does not name uses the level's default
  @full FILTER          rows of FULL=1 (union of the lines; without any: every row). In any
                        filter, members=default / chunk=default mean the level's default
  @target FILTER ratio=R [runs=N] [by=WHO]
                        the rraid/md target of the matching rows (and their minimum run count)
  @md-gt FILTER|none    RAID 4/5/6 rows that also measure md with group_thread_cnt = vCPUs (impl
                        md-gt; the better md figure counts). Without it every such row does; none:
                        no row (healthy reads go round md's stripe cache, chunk_aligned_read, so
                        the threads change nothing and a second md sample only favours md)
  @member-kind brd|nullb
  @mbps N               null_blk bandwidth cap per member (MiB/s)
  @baseline member      also measure one bare member (impl "member")
  @degraded L:N ...     members failed on both arrays before the runs, per level
  @slices N, @sample S  linear read: N stonewalled sections, S bytes read at each slice start
  @pattern NAME         IOMeter pattern (ratings in the summary)
  @runtime S, @ramp S   seconds per measurement and of ramp for rows without a target (not in
                        smoke runs)
  @min-runtime S        at least S seconds per measurement on every row, target or not (latency
                        rows: enough completions for a p99; not in smoke runs)

Output (stdout): one plan line per row, space-separated, '-' for empty:
  key job workload level members chunk bs qd jobs variant kind member_mib mbps degraded metric
  target minruns est_s vars smokegroup baseline slices sample md_gt
Estimate and counts go to stderr (or --describe).
"""
import argparse
import glob
import itertools
import os
import re
import sys

# Per level: (default members, full-matrix members, default chunk, full-matrix chunks).
LEVELS = {
    0: ([4], [2, 4], "512K", ["4K", "64K", "512K"]),
    1: ([2], [2], "-", ["-"]),
    4: ([4], [4, 8], "64K", ["4K", "64K", "512K"]),
    5: ([4], [4, 8], "64K", ["4K", "64K", "512K"]),
    6: ([4], [4, 8], "64K", ["4K", "64K", "512K"]),
    10: ([4], [4], "512K", ["4K", "64K", "512K"]),
}
COLUMN_VARS = ("BS", "QD", "JOBS")


def parse_job(path):
    d = {"file": path, "job": os.path.basename(path)[:-4], "vary": [], "fixed": {},
         "default": [], "full": [], "target": [], "members": {}, "chunks": {}, "degraded": {},
         "kind": "brd", "mbps": 0, "baseline": "-", "slices": 0, "sample": "-",
         "pattern": "-", "md_gt": None, "runtime": None, "min_runtime": None, "ramp": None, "metric": "bw", "title": None, "levels": []}
    for line in open(path):
        m = re.match(r"^;\s*@([a-z-]+)\s*(.*?)\s*$", line)
        if not m:
            continue
        k, v = m.group(1), m.group(2)
        if k == "title":
            d["title"] = v
        elif k == "metric":
            assert v in ("bw", "iops", "lat"), f"{path}: @metric bw|iops|lat"
            d["metric"] = v
        elif k == "levels":
            d["levels"] = [int(x) for x in v.split()]
        elif k in ("members", "chunks", "degraded"):
            for w in v.split():
                lv, vals = w.split(":")
                vals = vals.split(",")
                d[k][int(lv)] = [int(x) for x in vals] if k != "chunks" else vals
        elif k == "vary":
            for w in v.split():
                var, vals = w.split("=", 1)
                d["vary"].append((var, vals.split(",")))
        elif k == "fixed":
            for w in v.split():
                var, val = w.split("=", 1)
                d["fixed"][var] = val
        elif k == "default":
            d["default"].append(parse_filter(v))
        elif k == "full":
            d["full"].append(parse_filter(v))
        elif k == "target":
            f = parse_filter(v)
            t = {"ratio": float(f.pop("ratio")[0]),
                 "runs": int(f.pop("runs", ["3"])[0]),
                 "by": f.pop("by", ["-"])[0]}
            d["target"].append((f, t))
        elif k == "md-gt":
            d["md_gt"] = [] if v == "none" else (d["md_gt"] or []) + [parse_filter(v)]
        elif k == "member-kind":
            d["kind"] = v
        elif k == "mbps":
            d["mbps"] = int(v)
        elif k == "baseline":
            d["baseline"] = v
        elif k == "slices":
            d["slices"] = int(v)
        elif k == "sample":
            d["sample"] = v
        elif k == "pattern":
            d["pattern"] = v
        elif k == "runtime":
            d["runtime"] = int(v)
        elif k == "min-runtime":
            d["min_runtime"] = int(v)
        elif k == "ramp":
            d["ramp"] = int(v)
        else:
            raise SystemExit(f"{path}: unknown directive @{k}")
    if not d["levels"]:
        raise SystemExit(f"{path}: no @levels")
    d["title"] = d["title"] or d["job"]
    return d


def parse_filter(text):
    f = {}
    for w in text.split():
        k, v = w.split("=", 1)
        f[k if k in ("level", "members", "chunk") else k] = v.split(",")
    return f


def matches(filt, row, for_default):
    for k, vals in filt.items():
        if k in ("ratio", "runs", "by"):
            continue
        if k == "level":
            if str(row["level"]) not in vals:
                return False
        elif k == "members":
            if vals == ["default"]:
                if row["members"] not in row["default_members"]:
                    return False
            elif str(row["members"]) not in vals:
                return False
        elif k == "chunk":
            if vals == ["default"]:
                if row["chunk"] != row["default_chunk"]:
                    return False
            elif row["chunk"] not in vals:
                return False
        else:
            if row["vars"].get(k) not in vals:
                return False
    if for_default:
        dm, _, dc, _ = LEVELS[row["level"]]
        if "members" not in filt and row["members"] not in row["default_members"]:
            return False
        if "chunk" not in filt and row["chunk"] != row["default_chunk"]:
            return False
    return True


def level_members(job, lv, full):
    if lv in job["members"]:
        return job["members"][lv]
    dm, fm, _, _ = LEVELS[lv]
    return fm if full else dm


def level_chunks(job, lv):
    if lv in job["chunks"]:
        return job["chunks"][lv]
    return LEVELS[lv][3]


def rows_of(job, args):
    out = []
    names = [v for v, _ in job["vary"]]
    for lv in job["levels"]:
        dm = job["members"].get(lv, LEVELS[lv][0])
        dchunk = LEVELS[lv][2]
        chunks = level_chunks(job, lv)
        if dchunk not in chunks:
            dchunk = chunks[-1]
        for nm in level_members(job, lv, True):
            for ch in chunks:
                for combo in itertools.product(*[vals for _, vals in job["vary"]]):
                    vars_ = dict(job["fixed"])
                    vars_.update(dict(zip(names, combo)))
                    row = {"job": job["job"], "level": lv, "members": nm, "chunk": ch,
                           "vars": vars_, "default_members": dm, "default_chunk": dchunk}
                    out.append(row)
    return out


def row_key(row):
    v = row["vars"]
    parts = [f"raid{row['level']}", f"m{row['members']}"]
    if row["chunk"] != "-":
        parts.append(f"c{row['chunk']}")
    parts.append(row["job"])
    parts += [f"bs{v.get('BS', '-')}", f"qd{v.get('QD', '1')}", f"j{v.get('JOBS', '1')}"]
    extra = [f"{k}={val}" for k, val in sorted(v.items()) if k not in COLUMN_VARS]
    parts += extra
    return "/".join(parts)


def only_match(only, key):
    """ONLY=A,B keeps rows matching A or B; A+B keeps rows matching both. A word matches a key
    component exactly (raid1, m4, c64K, qd32), or is a substring of the workload name (seq)."""
    if not only:
        return True
    comps = key.split("/")
    workload = next((c for c in comps if not re.match(r"^(raid\d+|m\d+|c\d+[KM]|bs.*|qd.*|j\d+)$", c)), "")
    for alt in re.split(r"[,\s]+", only.strip()):
        if not alt:
            continue
        ok = True
        for w in alt.split("+"):
            if not (w in comps or w in workload or w == workload):
                ok = False
                break
        if ok:
            return True
    return False


def member_mib(row, job, args):
    if job["kind"] == "nullb":
        return args.nullb_mib
    # brd: two sets of members (rraid's and md's) share the guest's memory.
    return max(8, min(args.member_mib, args.brd_budget_mib // (2 * row["members"])))


def estimate(row, job, args, runs, has_target, md_gt):
    rt = job["runtime"] if job["runtime"] is not None else args.runtime
    ramp = job["ramp"] if job["ramp"] is not None else args.ramp
    if has_target:
        ramp = args.ramp
        if args.target_runtime is not None:
            rt = args.target_runtime
    if job["min_runtime"] is not None:
        rt = max(rt, job["min_runtime"])
    impls = 3 if md_gt else 2  # md with and without group_thread_cnt
    if job["baseline"] != "-":
        impls += 1
    if job["slices"]:
        # each slice reads SAMPLE at the members' cap (every member busy when the slice spans them)
        sample_mib = int(job["sample"].rstrip("M"))
        cap = max(1, job["mbps"]) * row["members"]
        per = job["slices"] * (sample_mib / cap + 0.4) + args.overhead
    else:
        per = rt + ramp + args.overhead
    return impls * runs * per + args.row_overhead


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default=os.path.join(os.path.dirname(__file__), "..", "jobs"))
    ap.add_argument("--mode", choices=("default", "full", "smoke"), default="default")
    ap.add_argument("--only", default="")
    ap.add_argument("--runtime", type=float, default=3)
    ap.add_argument("--target-runtime", type=float, default=None)
    ap.add_argument("--ramp", type=float, default=0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--overhead", type=float, default=0.9,
                    help="seconds per measurement beyond runtime+ramp (section start, snapshots) under TCG")
    ap.add_argument("--row-overhead", type=float, default=4,
                    help="seconds per row (one fio start-up, ~1.6 s under TCG, and parsing)")
    ap.add_argument("--member-mib", type=int, default=128)
    ap.add_argument("--nullb-mib", type=int, default=1024)
    ap.add_argument("--brd-budget-mib", type=int, default=1536)
    ap.add_argument("--skip", default="", help="file of row keys already done (resume)")
    ap.add_argument("--describe", action="store_true")
    args = ap.parse_args()

    done = set()
    if args.skip and os.path.exists(args.skip):
        done = {l.strip() for l in open(args.skip) if l.strip()}

    lines = []
    total_est = 0.0
    nrows = 0
    group_keys = set()
    per_job = {}
    for path in sorted(glob.glob(os.path.join(args.jobs, "*.fio"))):
        job = parse_job(path)
        rows = rows_of(job, args)
        if args.mode == "default":
            rows = [r for r in rows if any(matches(f, r, True) for f in job["default"])]
        elif args.mode == "full" and job["full"]:
            rows = [r for r in rows if any(matches(f, r, False) for f in job["full"])]
        elif args.mode == "smoke":
            # One candidate per level, in the job's level order; the guest runs the first whose
            # level rraid supports. Prefer a default row of that level.
            pick = []
            for lv in job["levels"]:
                lrows = [r for r in rows if r["level"] == lv]
                drows = [r for r in lrows if any(matches(f, r, True) for f in job["default"])]
                # smallest member count keeps the smoke run short
                cand = sorted(drows or lrows, key=lambda r: r["members"])
                if cand:
                    pick.append(cand[0])
            rows = pick
        for r in rows:
            key = row_key(r)
            if not only_match(args.only, key) or key in done:
                continue
            target, minruns, by = "-", args.runs, "-"
            for f, t in job["target"]:
                if matches(f, r, False):
                    target, minruns, by = t["ratio"], max(args.runs, t["runs"]), t["by"]
            if args.mode == "smoke":
                minruns = 1
            v = r["vars"]
            variant = ",".join(f"{k}={val}" for k, val in sorted(v.items())
                               if k not in COLUMN_VARS) or "-"
            fv = [f"{k}={val}" for k, val in sorted(v.items()) if k not in COLUMN_VARS]
            if job["runtime"] is not None and target == "-" and args.mode != "smoke":
                fv.append(f"RUNTIME={job['runtime']}")
            if job["min_runtime"] is not None and args.mode != "smoke":
                base = job["runtime"] if job["runtime"] is not None and target == "-" else (
                    args.target_runtime if target != "-" and args.target_runtime is not None else args.runtime)
                fv = [f for f in fv if not f.startswith("RUNTIME=")]
                fv.append(f"RUNTIME={max(int(base), job['min_runtime'])}")
            if job["ramp"] is not None and target == "-" and args.mode != "smoke":
                fv.append(f"RAMP={job['ramp']}")
            fio_vars = ",".join(fv) or "-"
            gt = r["level"] in (4, 5, 6) and (
                job["md_gt"] is None or any(matches(f, r, False) for f in job["md_gt"]))
            est = estimate(r, job, args, minruns, target != "-", gt)
            mib = member_mib(r, job, args)
            deg = job["degraded"].get(r["level"], [0])[0] if job["degraded"] else 0
            fields = [key, job["job"], job["job"], r["level"], r["members"], r["chunk"],
                      v.get("BS", "-"), v.get("QD", "1"), v.get("JOBS", "1"), variant,
                      job["kind"], mib, job["mbps"], deg, job["metric"],
                      target, minruns, int(round(est)), fio_vars,
                      job["job"] if args.mode == "smoke" else "-",
                      job["baseline"], job["slices"], job["sample"], int(gt)]
            lines.append(" ".join(str(x) for x in fields))
            gk = (r["level"], r["members"], r["chunk"], job["kind"], mib, job["mbps"], deg,
                  v.get("SIZES", "-"))
            if gk not in group_keys:
                group_keys.add(gk)
                # setup: members, arrays, one fill of both arrays
                est += 10 + (2 * r["members"] * mib / 400.0 if job["kind"] == "brd" else 0)
            total_est += est if args.mode != "smoke" else est / max(1, len(job["levels"]))
            nrows += 1
            per_job[job["job"]] = per_job.get(job["job"], 0) + 1
            if by != "-":
                pass
    # Sort by array configuration so that each configuration is set up once.
    def sort_key(line):
        f = line.split()
        return (f[10], int(f[3]), int(f[4]), f[5], int(f[11]), int(f[12]), int(f[13]),
                f[18] if "SIZES" in f[18] else "", f[1])
    lines.sort(key=sort_key)
    for l in lines:
        print(l)
    msg = (f"{nrows} rows ({', '.join(f'{k} {n}' for k, n in sorted(per_job.items()))}); "
           f"estimated {int(total_est // 60)} min {int(total_est % 60)} s")
    print(f"plan: {msg}", file=sys.stderr)


if __name__ == "__main__":
    main()
