#!/usr/bin/python3
"""The Grafana dashboard against the daemon's metric families (label unit).

  test_grafana_dashboard.py DASHBOARD.json EXPORTED_METRICS.txt PROMETHEUS.yml

1. Every PromQL expression of every panel target names only exported
   families (a histogram's _bucket, _sum and _count series count as the
   family), per EXPORTED_METRICS.txt, the one list of what /metrics serves.
2. The JSON imports: schemaVersion, uid and title; a DS_PROMETHEUS
   datasource input that every panel and target uses; panels with unique
   ids, a type, a gridPos, and targets with refId and expr.
3. The scrape example names job eigstream on 127.0.0.1:9464.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "python"))
from eigstream_check import check, report  # noqa: E402

DASHBOARD, EXPORTED, PROMETHEUS = sys.argv[1:4]
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# PromQL words that are not metric names: aggregations, their modifiers, keywords.
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
                "offset", "inf", "nan"}


def read_families(path):
    """{name: type} of the exported families; '#' starts a comment."""
    families = {}
    for line in open(path):
        words = line.split("#", 1)[0].split()
        if words:
            families[words[0]] = words[1]
    return families


def metric_names(expr):
    """The metric names an expression reads: identifiers that are not
    functions (followed by '('), label names or values (inside {} or after
    by/without), range durations ([1m]), variables ($job) or keywords."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)               # strings
    text = re.sub(r"\{[^}]*\}", " ", text)                         # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)                        # ranges
    text = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", " ", text)  # grouping labels
    text = re.sub(r"\$\{?\w+\}?", " ", text)                      # Grafana variables
    names = set()
    for m in re.finditer(r"(?<![\w:.])[A-Za-z_:][A-Za-z0-9_:]*", text):  # not the m of 5m
        rest = text[m.end():].lstrip()
        if not rest.startswith("(") and m.group(0).lower() not in PROMQL_WORDS:
            names.add(m.group(0))
    return names


def family_of(name, families):
    for suffix in HISTOGRAM_SUFFIXES:
        base = name[:-len(suffix)]
        if name.endswith(suffix) and families.get(base) == "histogram":
            return base
    return name


def check_metrics(dashboard, families):
    used = set()
    for panel in dashboard.get("panels", []):
        for target in panel.get("targets", []):
            names = metric_names(target.get("expr", ""))
            check(names, f"panel {panel.get('title')!r}: no metric in {target.get('expr')!r}")
            for name in names:
                family = family_of(name, families)
                check(family in families, f"panel {panel.get('title')!r}: {name} is not exported")
                used.add(family)
    for required in ("eigstream_frames_received_total", "eigstream_frames_published_total",
                     "eigstream_end_to_end_latency_seconds", "eigstream_deadline_seconds",
                     "eigstream_stage_latency_seconds", "eigstream_frames_dropped_total",
                     "eigstream_frames_rejected_total", "eigstream_queue_depth", "eigstream_matrices_failed_total",
                     "eigstream_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes"):
        check(required in used, f"no panel shows {required}")


def check_structure(d):
    check(isinstance(d.get("schemaVersion"), int) and 36 <= d["schemaVersion"] <= 40,
          f"schemaVersion {d.get('schemaVersion')}")
    check(d.get("uid") and d.get("title"), "uid and title")
    inputs = [i for i in d.get("__inputs", []) if i.get("name") == "DS_PROMETHEUS"]
    check(len(inputs) == 1 and inputs[0].get("type") == "datasource" and inputs[0].get("pluginId") == "prometheus",
          f"DS_PROMETHEUS input: {d.get('__inputs')}")
    panels = d.get("panels", [])
    ids = [p.get("id") for p in panels]
    check(len(panels) >= 10 and all(isinstance(i, int) for i in ids) and len(set(ids)) == len(ids), f"ids {ids}")
    for p in panels:
        name = p.get("title", p.get("id"))
        check(p.get("type") in ("timeseries", "table", "stat", "gauge", "bargauge"), f"{name}: type {p.get('type')}")
        check(all(k in p.get("gridPos", {}) for k in "xywh"), f"{name}: gridPos")
        check(p.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}", f"{name}: datasource {p.get('datasource')}")
        targets = p.get("targets", [])
        check(targets and all(t.get("expr") and t.get("refId") for t in targets), f"{name}: targets {targets}")
        check(all(t.get("datasource", {}).get("uid") == "${DS_PROMETHEUS}" for t in targets),
              f"{name}: a target without the DS_PROMETHEUS datasource")


def check_prometheus(path):
    text = open(path).read()
    check(re.search(r"job_name:\s*eigstream\b", text) and "127.0.0.1:9464" in text and
          re.search(r"scrape_interval:\s*[15]s", text), "prometheus.yml: job eigstream on 127.0.0.1:9464, 1 s or 5 s")


def self_test():
    """The extractor on expressions whose names are known."""
    got = metric_names('histogram_quantile(0.99, sum by (le, stage) (rate(a_seconds_bucket{job="$job",x=~"y"}[1m])))'
                       ' / on (job) group_left b_total offset 5m')
    check(got == {"a_seconds_bucket", "b_total"}, f"extractor: {got}")
    check(family_of("a_seconds_bucket", {"a_seconds": "histogram"}) == "a_seconds", "histogram suffix")
    check(family_of("c_count", {"c": "counter"}) == "c_count", "a counter's _count stays")


self_test()
families = read_families(EXPORTED)
with open(DASHBOARD) as f:
    try:
        dashboard = json.load(f)
    except ValueError as e:
        check(False, f"{DASHBOARD}: {e}")
        dashboard = {}
check_structure(dashboard)
check_metrics(dashboard, families)
check_prometheus(PROMETHEUS)
report("test_grafana_dashboard")
