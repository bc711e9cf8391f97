#!/usr/bin/env python3
"""Draws the slices of a trnsim Chrome JSON trace (`trnsim run NAME --trace FILE.json`) as an
SVG timeline, one row per track, in simulated time: a still picture of what Perfetto shows.
Used for the README's picture; for exploring a trace, open the .pftrace in ui.perfetto.dev.

Usage: scripts/trace-svg.py TRACE.json OUT.svg [TRACK_PREFIX ...]
  TRACK_PREFIX  keep tracks whose name starts with one of these (default: every track with slices;
                "#1" lanes of a track are folded into it)
"""
import html
import json
import sys

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, out, prefixes = sys.argv[1], sys.argv[2], sys.argv[3:]
    doc = json.load(open(src))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    rows, slices = [], []
    for e in events:
        if e.get("ph") != "X":
            continue
        track = names.get(e["tid"], str(e["tid"])).split(" #")[0]
        if prefixes and not any(track.startswith(p) for p in prefixes):
            continue
        if track not in rows:
            rows.append(track)
        slices.append((track, e["ts"], e.get("dur", 0), e["name"]))
    if not slices:
        sys.exit(f"no slices in {src} for {prefixes}")
    rows.sort(key=lambda r: [int(t) if t.isdigit() else t for t in __import__("re").split(r"(\d+)", r)])
    t0 = min(s[1] for s in slices)
    t1 = max(s[1] + s[2] for s in slices)
    label_w, width, row_h, top = 150, 900, 16, 40
    scale = (width - label_w - 20) / max(t1 - t0, 1e-9)
    colors = {}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + row_h * len(rows) + 40}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{label_w}" y="20" font-size="13">{html.escape(src.split("/")[-1])}: '
        f"{len(slices)} slices on {len(rows)} tracks, {t1 - t0:.1f} us of simulated time</text>",
    ]
    for i, r in enumerate(rows):
        y = top + i * row_h
        parts.append(f'<text x="{label_w - 6}" y="{y + 11}" text-anchor="end">{html.escape(r)}</text>')
        parts.append(f'<line x1="{label_w}" y1="{y + row_h}" x2="{width - 20}" y2="{y + row_h}" stroke="#eee"/>')
    for track, ts, dur, name in slices:
        color = colors.setdefault(name, PALETTE[len(colors) % len(PALETTE)])
        x = label_w + (ts - t0) * scale
        y = top + rows.index(track) * row_h + 2
        parts.append(
            f'<rect x="{x:.2f}" y="{y}" width="{max(dur * scale, 0.6):.2f}" height="{row_h - 4}" fill="{color}">'
            f"<title>{html.escape(name)}</title></rect>"
        )
    y = top + row_h * len(rows) + 20
    parts.append(f'<text x="{label_w}" y="{y}">0 us</text>')
    parts.append(f'<text x="{width - 20}" y="{y}" text-anchor="end">{t1 - t0:.1f} us</text>')
    x = label_w + 60
    for name, color in list(colors.items())[:8]:
        parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14}" y="{y}">{html.escape(name)}</text>')
        x += 14 + 7 * len(name) + 16
    parts.append("</svg>")
    open(out, "w").write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
