#!/usr/bin/python3
"""summary.md and PNG plots of a benchmark run, from its results.csv.

usage: report.py RESULTS_DIR [--no-plots]

Per row (key) and implementation the median over runs of each figure; the row's ratio is the
median over runs of rraid / (the better of md and md-gt) in that run, on the row's metric
(MB/s for bw rows, IOPS for iops rows: see the job file's @metric); for lat rows md's p50 and
p99 over rraid's, the worse of the two (>= 1: rraid is no slower), against md's lower latency.
"""
import csv
import math
import os
import re
import statistics
import sys
from collections import OrderedDict, defaultdict

JOBS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "jobs")


def job_meta():
    meta = {}
    for f in sorted(os.listdir(JOBS_DIR)):
        if not f.endswith(".fio"):
            continue
        m = {"metric": "bw", "title": f[:-4], "pattern": None}
        for line in open(os.path.join(JOBS_DIR, f)):
            r = re.match(r"^;\s*@(metric|title|pattern)\s+(.*?)\s*$", line)
            if r:
                m[r.group(1)] = r.group(2)
        meta[f[:-4]] = m
    return meta


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def geomean(vals):
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def load(path):
    rows = OrderedDict()
    for r in csv.DictReader(open(path)):
        key = r["key"]
        row = rows.setdefault(key, {"key": key, "level": int(r["level"]), "members": int(r["members"]),
                                    "chunk": r["chunk"], "workload": r["workload"],
                                    "variant": r["variant"], "bs": r["bs"], "qd": r["qd"],
                                    "jobs": r["jobs"], "runs": defaultdict(dict), "slices": defaultdict(dict),
                                    "status": "ok", "notes": []})
        if r["status"] != "ok":
            row["status"] = r["status"] if row["status"] == "ok" or r["status"] == "error" else row["status"]
            if r["note"]:
                row["notes"].append(f"{r['impl']}: {r['note']}" if r["run"] != "0" else r["note"])
            continue
        run = int(r["run"])
        fig = {k: num(r.get(k)) for k in ("mb_s", "iops", "p50_us", "p99_us", "cpu_s_per_gib")}
        if row["variant"].startswith("slice=") and not r["variant"].startswith("slice="):
            row["variant"] = r["variant"]
        if r["variant"].startswith("slice="):
            row["slices"][(r["impl"], run)][int(r["variant"][6:])] = fig["mb_s"]
        else:
            row["runs"][run][r["impl"]] = fig
    return rows


def finish(rows, meta):
    for row in rows.values():
        m = meta.get(row["workload"], {"metric": "bw", "title": row["workload"], "pattern": None})
        row["metric"] = m["metric"]
        row["title"] = m["title"]
        row["pattern"] = m.get("pattern")
        lat = m["metric"] == "lat"
        mk = {"iops": "iops", "lat": "p99_us"}.get(m["metric"], "mb_s")
        ratios = []
        per_impl = defaultdict(lambda: defaultdict(list))
        for run, impls in sorted(row["runs"].items()):
            for impl, fig in impls.items():
                for k, v in fig.items():
                    per_impl[impl][k].append(v)
            rr = impls.get("rraid", {})
            if lat:
                q = []
                for k in ("p50_us", "p99_us"):
                    mds = [impls[i][k] for i in ("md", "md-gt") if i in impls and impls[i].get(k)]
                    if rr.get(k) and mds:
                        q.append(min(mds) / rr[k])
                if len(q) == 2:
                    ratios.append(min(q))
                continue
            r = rr.get(mk)
            mds = [impls[i][mk] for i in ("md", "md-gt") if i in impls and impls[i].get(mk)]
            if r is not None and mds:
                ratios.append(r / max(mds))
        row["nruns"] = len(ratios)
        row["ratio"] = med(ratios)
        row["spread"] = f"{min(ratios):.2f}–{max(ratios):.2f}" if ratios else ""
        row["med"] = {impl: {k: med(v) for k, v in figs.items()} for impl, figs in per_impl.items()}
        mdbest = None
        for impl in ("md", "md-gt"):
            v = row["med"].get(impl, {}).get(mk)
            if v is not None and (mdbest is None or (v < mdbest[1] if lat else v > mdbest[1])):
                mdbest = (impl, v)
        row["md_impl"] = mdbest[0] if mdbest else "md"
        row["value"] = {impl: row["med"].get(impl, {}).get(mk) for impl in row["med"]}
        if row["status"] == "ok" and row["ratio"] is None:
            row["status"] = "error"
            row["notes"].append("no complete rraid/md pair")


UNIT = {"bw": "MB/s", "iops": "IOPS", "lat": "µs p99"}


def fmt(v, nd=2):
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{nd}f}"


def level_name(l):
    return f"RAID {l}"


def conf(row):
    c = f"{row['members']}×"
    if row["chunk"] != "-":
        c += f", {row['chunk']}"
    return c


def params(row):
    p = []
    if row["bs"] not in ("-", "mix"):
        p.append(row["bs"])
    elif row["bs"] == "mix":
        p.append("mix")
    p.append(f"QD{row['qd']}")
    if row["jobs"] != "1":
        p.append(f"{row['jobs']} jobs")
    if row["variant"] not in ("-", ""):
        v = row["variant"]
        v = v.replace("MIX=", "read ").replace("SIZES=", "sizes ")
        if v.startswith("read "):
            v += "%"
        p.append(v)
    return " ".join(p)


def targets_of(path):
    """Row key -> (target, by) from the plan comment in rows.txt (field 5 of @@ROW lines)."""
    t = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 5 and f[4] != "-":
                t[f[0]] = float(f[4])
    return t


def ratings(rows):
    """IOMeter ratings per array (level, members, chunk) and pattern, per implementation."""
    acc = defaultdict(lambda: defaultdict(list))  # (level, conf, pattern) -> impl -> [(qd, iops)]
    for row in rows.values():
        if not row["pattern"] or row["status"] != "ok":
            continue
        k = (row["level"], conf(row), row["pattern"])
        for impl, v in row["value"].items():
            if impl in ("rraid", "md", "md-gt") and v is not None:
                acc[k][impl].append((int(row["qd"]), v))
    out = []
    for (lvl, cf, pat), impls in sorted(acc.items()):
        res = {}
        for impl, pts in impls.items():
            qds = sorted({q for q, _ in pts})
            if pat == "workstation":
                # Σ IOPS(q)/q over the measured depths (ARC-1220 review), complete sets only
                res[impl] = sum(v / q for q, v in pts) if len(qds) == 6 else None
            else:
                res[impl] = statistics.mean(v for _, v in pts) if len(qds) == 6 else None
        md = max([res.get(i) for i in ("md", "md-gt") if res.get(i) is not None], default=None)
        rr = res.get("rraid")
        out.append((lvl, cf, pat, rr, md, rr / md if rr and md else None, len(impls.get("rraid", []))))
    return out


def write_summary(out_dir, rows, info):
    tg = targets_of(os.path.join(out_dir, "rows.txt"))
    ok = [r for r in rows.values() if r["status"] == "ok" and r["ratio"] is not None]
    na = [r for r in rows.values() if r["status"] == "n/a"]
    err = [r for r in rows.values() if r["status"] == "error"]
    L = []
    L.append("# rraid against md: benchmark summary\n")
    for line in info:
        L.append(f"- {line}")
    L.append("")
    L.append("Every figure comes from a QEMU TCG guest: absolute speeds are emulated and mean "
             "nothing; only the ratio rraid/md, measured alternately in one boot over identical "
             "members, does. Ratio = median over runs of rraid ÷ md (for RAID 4/5/6 the better "
             "of md with and without `group_thread_cnt`). CPU = non-idle CPU seconds "
             "(`/proc/stat`, all CPUs) per GiB moved at the array. Method and job files: "
             "`bench/README.md`, `bench/jobs/`.\n")
    L.append(f"{len(ok)} rows measured, {len(na)} not available, {len(err)} errors.\n")

    # Rows with targets (measured or failed); those of levels rraid lacks are counted below
    trows = [r for r in rows.values() if r["key"] in tg and r["status"] != "n/a"]
    tna = [r for r in rows.values() if r["key"] in tg and r["status"] == "n/a"]
    if trows or tna:
        L.append("## Rows with a target\n")
    if trows:
        L.append("| level | workload | array | parameters | rraid | md | rraid/md | target | runs (spread) | |")
        L.append("|---|---|---|---|---:|---:|---:|---:|---:|---|")
        for r in sorted(trows, key=lambda r: (r["level"], r["workload"], r["key"])):
            t = tg[r["key"]]
            unit = UNIT[r["metric"]]
            if r["status"] != "ok" or r["ratio"] is None:
                L.append(f"| {level_name(r['level'])} | {r['title']} | {conf(r)} | {params(r)} | | | "
                         f"{r['status']} | {t:.2f} | | {'; '.join(r['notes'])[:120]} |")
                continue
            verdict = "meets" if r["ratio"] >= t else "**below**"
            L.append(f"| {level_name(r['level'])} | {r['title']} | {conf(r)} | {params(r)} | "
                     f"{fmt(r['value'].get('rraid'))} {unit} | {fmt(r['value'].get(r['md_impl']))} {unit} | "
                     f"**{r['ratio']:.3f}** | {t:.2f} | {r['nruns']} ({r['spread']}) | {verdict} |")
        L.append("")
    if tna:
        by_level = defaultdict(list)
        for r in tna:
            by_level[r["level"]].append(r)
        for lvl, rs in sorted(by_level.items()):
            why = "; ".join(dict.fromkeys(n for r in rs for n in r["notes"])) or "n/a"
            L.append(f"- {level_name(lvl)}: {len(rs)} rows with a target not measured: {why}.")
        L.append("")

    # per level and workload, worst first
    groups = defaultdict(list)
    for r in ok:
        groups[(r["level"], r["title"])].append(r)
    if groups:
        L.append("## Ratio rraid/md per level and workload, worst first\n")
        L.append("Geometric mean of the rows' ratios; lowest and highest row.\n")
        L.append("| level | workload | rows | rraid/md | lowest | highest |")
        L.append("|---|---|---:|---:|---|---|")
        items = sorted(groups.items(), key=lambda kv: geomean([r["ratio"] for r in kv[1]]))
        for (lvl, title), rs in items:
            lo = min(rs, key=lambda r: r["ratio"])
            hi = max(rs, key=lambda r: r["ratio"])
            L.append(f"| {level_name(lvl)} | {title} | {len(rs)} | **{geomean([r['ratio'] for r in rs]):.3f}** | "
                     f"{lo['ratio']:.3f} ({conf(lo)} {params(lo)}) | {hi['ratio']:.3f} ({conf(hi)} {params(hi)}) |")
        L.append("")

    rt = ratings(rows)
    if rt:
        L.append("## IOMeter pattern ratings\n")
        L.append("File server, Web server (and Database): mean IOPS over QD 1, 2, 4, 8, 16, 32 "
                 "(Database over every read share measured too); Workstation: Σ IOPS(q)/q over the "
                 "same depths (Areca ARC-1220 review).\n")
        L.append("| level | array | pattern | rraid | md | rraid/md |")
        L.append("|---|---|---|---:|---:|---:|")
        for lvl, cf, pat, rr, md, ratio, n in rt:
            L.append(f"| {level_name(lvl)} | {cf} | {pat} | {fmt(rr)} | {fmt(md)} | "
                     f"{'**%.3f**' % ratio if ratio else 'incomplete'} |")
        L.append("")

    lt = [r for r in ok if r["metric"] == "lat"]
    if lt:
        L.append("## QD 1 latency\n")
        L.append("Latency (µs; whole latency, submission included, since fa48b16; completion "
                 "latency before), median over runs; ratio = md ÷ rraid per run on p50 and on "
                 "p99, the worse of the two (≥ 1: rraid no slower than md on either).\n")
        L.append("| level | array | workload | p50 rraid / md | p99 rraid / md | md/rraid p50 | md/rraid p99 | ratio | runs (spread) |")
        L.append("|---|---|---|---|---|---:|---:|---:|---:|")
        for r in sorted(lt, key=lambda r: (r["level"], r["workload"], r["variant"])):
            mr, mm = r["med"].get("rraid", {}), r["med"].get(r["md_impl"], {})
            q = [mm.get(k) / mr[k] if mr.get(k) and mm.get(k) else None for k in ("p50_us", "p99_us")]
            L.append(f"| {level_name(r['level'])} | {conf(r)} | {r['title']} {params(r)} | "
                     f"{fmt(mr.get('p50_us'), 0)} / {fmt(mm.get('p50_us'), 0)} | "
                     f"{fmt(mr.get('p99_us'), 0)} / {fmt(mm.get('p99_us'), 0)} | "
                     f"{fmt(q[0], 3)} | {fmt(q[1], 3)} | **{r['ratio']:.3f}** | {r['nruns']} ({r['spread']}) |")
        L.append("")

    sc = [r for r in ok if r["workload"].startswith("scaling-")]
    if sc:
        L.append("## RAID 0 scaling over capped null_blk members\n")
        L.append("Throughput relative to one bare member measured in the same run (ideal: N×).\n")
        L.append("| workload | members | chunk | member MB/s | rraid ×member | md ×member | ideal | rraid/md |")
        L.append("|---|---:|---|---:|---:|---:|---:|---:|")
        for r in sorted(sc, key=lambda r: (r["workload"], r["chunk"], r["members"])):
            b = r["value"].get("member")
            rr, md = r["value"].get("rraid"), r["value"].get(r["md_impl"])
            L.append(f"| {r['title']} | {r['members']} | {r['chunk']} | {fmt(b)} | "
                     f"{fmt(rr / b if b and rr else None)} | {fmt(md / b if b and md else None)} | "
                     f"{r['members']} | {r['ratio']:.3f} |")
        L.append("")

    if ok:
        L.append("## Every row, worst ratio first\n")
        L.append("| rraid/md | level | array | workload | parameters | rraid | md | unit | p99 µs rraid / md | CPU s/GiB rraid / md | runs (spread) |")
        L.append("|---:|---|---|---|---|---:|---:|---|---|---|---:|")
        for r in sorted(ok, key=lambda r: r["ratio"]):
            unit = UNIT[r["metric"]]
            mr, mm = r["med"].get("rraid", {}), r["med"].get(r["md_impl"], {})
            L.append(f"| **{r['ratio']:.3f}** | {level_name(r['level'])} | {conf(r)} | {r['title']} | {params(r)} | "
                     f"{fmt(r['value'].get('rraid'))} | {fmt(r['value'].get(r['md_impl']))} | {unit} | "
                     f"{fmt(mr.get('p99_us'), 0)} / {fmt(mm.get('p99_us'), 0)} | "
                     f"{fmt(mr.get('cpu_s_per_gib'))} / {fmt(mm.get('cpu_s_per_gib'))} | {r['nruns']} ({r['spread']}) |")
        L.append("")

    if na:
        L.append("## Not available\n")
        reasons = defaultdict(list)
        for r in na:
            reasons["; ".join(dict.fromkeys(r["notes"])) or "n/a"].append(r)
        L.append("| rows | reason |")
        L.append("|---:|---|")
        for why, rs in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            L.append(f"| {len(rs)} | {why} |")
        L.append("")
    if err:
        L.append("## Errors\n")
        for r in err:
            L.append(f"- `{r['key']}`: {'; '.join(dict.fromkeys(r['notes']))[:300]}")
        L.append("")
    open(os.path.join(out_dir, "summary.md"), "w").write("\n".join(L))


# --- plots ----------------------------------------------------------------------------------

def plots(out_dir, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    ok = [r for r in rows.values() if r["status"] == "ok" and r["ratio"] is not None]
    made = []
    style = {"rraid": dict(ls="-", marker="o"), "md": dict(ls="--", marker="s"),
             "md-gt": dict(ls=":", marker="^")}

    def bs_bytes(b):
        m = re.match(r"^(\d+)([kKmM]?)$", b)
        if not m:
            return None
        return int(m.group(1)) * {"": 1, "k": 1024, "K": 1024, "m": 1 << 20, "M": 1 << 20}[m.group(2)]

    # 1. throughput against block size, per level (row) and direction (column), one line per QD and impl
    seq = [r for r in ok if r["workload"] in ("seq-read", "seq-write")]
    confs = sorted({(r["level"], conf(r)) for r in seq})
    if confs:
        fig, axes = plt.subplots(len(confs), 2, figsize=(11, 3.4 * len(confs)), squeeze=False)
        for i, (lvl, cf) in enumerate(confs):
            for j, wl in enumerate(("seq-read", "seq-write")):
                ax = axes[i][j]
                rs = [r for r in seq if r["level"] == lvl and conf(r) == cf and r["workload"] == wl]
                for ci, qd in enumerate(sorted({int(r["qd"]) for r in rs})):
                    for impl in ("rraid", "md", "md-gt"):
                        pts = sorted((bs_bytes(r["bs"]), r["value"].get(impl)) for r in rs
                                     if int(r["qd"]) == qd and r["value"].get(impl) is not None)
                        if pts:
                            ax.plot([p[0] / 1024 for p in pts], [p[1] for p in pts],
                                    label=f"{impl} QD{qd}", color=f"C{ci}", **style[impl])
                ax.set_xscale("log", base=2)
                ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                    lambda x, _: f"{x / 1024:g}M" if x >= 1024 else f"{x:g}K"))
                ax.set_ylim(bottom=0)
                ax.set_xlabel("block size")
                ax.set_ylabel("MB/s")
                ax.set_title(f"RAID {lvl} ({cf}) {wl}")
                ax.grid(alpha=0.3)
                if ax.lines:
                    ax.legend(fontsize=7)
        fig.suptitle("Throughput against block size (TCG guest: compare lines, not absolutes)")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "throughput-bs.png"), dpi=80)
        plt.close(fig)
        made.append("throughput-bs.png")

    # 2. scaling
    sc = [r for r in ok if r["workload"].startswith("scaling-")]
    if sc:
        wls = sorted({r["workload"] for r in sc})
        fig, axes = plt.subplots(1, len(wls), figsize=(5.5 * len(wls), 4), squeeze=False)
        for j, wl in enumerate(wls):
            ax = axes[0][j]
            rs = [r for r in sc if r["workload"] == wl]
            for ci, ch in enumerate(sorted({r["chunk"] for r in rs})):
                for impl in ("rraid", "md"):
                    pts = [(1, 1.0)]
                    for r in sorted((r for r in rs if r["chunk"] == ch), key=lambda r: r["members"]):
                        b, v = r["value"].get("member"), r["value"].get(impl)
                        if b and v:
                            pts.append((r["members"], v / b))
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=f"C{ci}",
                            label=f"{impl} chunk {ch}", **style[impl])
            n = max(r["members"] for r in rs)
            ax.plot([1, n], [1, n], color="grey", lw=1, label="ideal N×")
            ax.set_xlabel("members (1 = one bare member)")
            ax.set_ylabel("throughput / one member")
            ax.set_title(f"RAID 0 {wl}")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "scaling.png"), dpi=80)
        plt.close(fig)
        made.append("scaling.png")

    # 3. IOPS against QD for the four patterns
    pat = [r for r in ok if r["pattern"]]
    if pat:
        names = ["database", "fileserver", "webserver", "workstation"]
        fig, axes = plt.subplots(2, 2, figsize=(11, 8), squeeze=False)
        for k, name in enumerate(names):
            ax = axes[k // 2][k % 2]
            rs = [r for r in pat if r["pattern"] == name]
            for ci, lc in enumerate(sorted({(r["level"], conf(r), r["variant"]) for r in rs})):
                for impl in ("rraid", "md", "md-gt"):
                    pts = sorted((int(r["qd"]), r["value"].get(impl)) for r in rs
                                 if (r["level"], conf(r), r["variant"]) == lc and r["value"].get(impl))
                    if pts:
                        v = "" if lc[2] in ("-", "") else " " + lc[2].replace("MIX=", "read ") + "%"
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=f"C{ci % 10}",
                                label=f"{impl} RAID {lc[0]}{v}", **style[impl])
            ax.set_xscale("log", base=2)
            ax.set_xticks([1, 2, 4, 8, 16, 32])
            ax.set_xticklabels(["1", "2", "4", "8", "16", "32"])
            ax.set_xlabel("queue depth")
            ax.set_ylabel("IOPS")
            ax.set_title(f"IOMeter {name}")
            ax.grid(alpha=0.3)
            if ax.lines:
                ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "patterns.png"), dpi=80)
        plt.close(fig)
        made.append("patterns.png")

    # 4. linear read
    lin = [r for r in rows.values() if r["workload"] == "linear-read" and r["slices"]]
    if lin:
        fig, ax = plt.subplots(figsize=(9, 4))
        for ci, r in enumerate(lin):
            for impl in ("rraid", "md"):
                per = defaultdict(list)
                for (im, run), sl in r["slices"].items():
                    if im == impl:
                        for i, v in sl.items():
                            per[i].append(v)
                if per:
                    n = max(per) + 1
                    xs = sorted(per)
                    ax.plot([100 * (x + 0.5) / n for x in xs], [med(per[x]) for x in xs],
                            color=f"C{ci}", label=f"{impl} {r['variant'].replace('SIZES=', 'sizes ')}",
                            **dict(style[impl], marker=None))
        ax.set_xlabel("position in the array (%)")
        ax.set_ylabel("MB/s")
        ax.set_ylim(bottom=0)
        ax.set_title("Linear read over capped null_blk members (RAID 0)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "linear-read.png"), dpi=80)
        plt.close(fig)
        made.append("linear-read.png")

    # 5. heat map of the ratios: workload × parameters (rows) against level/array (columns)
    if ok:
        cols = sorted({(r["level"], conf(r)) for r in ok})
        def natural(t):
            return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", " ".join(t))]
        lines = sorted({(r["title"], params(r)) for r in ok}, key=natural)
        grid = [[None] * len(cols) for _ in lines]
        for r in ok:
            grid[lines.index((r["title"], params(r)))][cols.index((r["level"], conf(r)))] = r["ratio"]
        import numpy as np
        a = np.array([[np.nan if v is None else v for v in row] for row in grid])
        h = max(4, 0.22 * len(lines) + 1.5)
        fig, ax = plt.subplots(figsize=(3 + 1.3 * len(cols), h))
        im = ax.imshow(a, cmap="RdYlGn", vmin=0.5, vmax=1.5, aspect="auto")
        ax.set_xticks(range(len(cols)))
        ax.set_xticklabels([f"RAID {l}\n{c}" for l, c in cols], fontsize=7)
        ax.set_yticks(range(len(lines)))
        ax.set_yticklabels([f"{t} {p}" for t, p in lines], fontsize=6)
        for i in range(len(lines)):
            for j in range(len(cols)):
                if not np.isnan(a[i][j]):
                    ax.text(j, i, f"{a[i][j]:.2f}", ha="center", va="center", fontsize=6)
        fig.colorbar(im, ax=ax, label="rraid / md")
        ax.set_title("rraid / md (median ratio)")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "ratios-heatmap.png"), dpi=80)
        plt.close(fig)
        made.append("ratios-heatmap.png")
    return made


def main():
    out_dir = sys.argv[1]
    meta = job_meta()
    rows = load(os.path.join(out_dir, "results.csv"))
    finish(rows, meta)
    info = []
    ip = os.path.join(out_dir, "info.txt")
    if os.path.exists(ip):
        seen = set()
        for line in open(ip):
            line = line.strip()
            if line and line not in seen and not line.startswith("config:"):
                seen.add(line)
                info.append(line)
    write_summary(out_dir, rows, info)
    made = []
    if "--no-plots" not in sys.argv:
        made = plots(out_dir, rows)
        if made:
            with open(os.path.join(out_dir, "summary.md"), "a") as f:
                f.write("\n## Plots\n\n" + "\n".join(f"![{m}]({m})" for m in made) + "\n")
    print(f"report: {os.path.join(out_dir, 'summary.md')}" + (f", {', '.join(made)}" if made else ""))


if __name__ == "__main__":
    main()
