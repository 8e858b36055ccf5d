#!/usr/bin/env python3
"""A flamegraph (SVG) of a whole process from `perf script`'s samples.

    perf record -F 199 --call-graph dwarf -p PID -o perf.data -- sleep 10
    perf script -i perf.data | scripts/flamegraph.py --title "..." > out.svg

The criterion benches draw their own with pprof, in-process and for the
bench's code alone; a server under wrk spends most of its time in the
kernel and in actix's dispatch, which only perf sees. Each frame is a box
as wide as its share of the samples, callers below callees; its <title>
holds its name, samples and share, as pprof's do. Frames below 0.1% of
the samples are left out, and names are cut to fit their box.
"""

import argparse
import html
import re
import sys
from collections import defaultdict

ROW = 16
WIDTH = 1200
MIN_SHARE = 0.001

# A sample's header: `comm pid [cpu] time: period event:`.
HEADER = re.compile(r"^\S.*:\s*$|^\S.*\s\d+\.\d+:\s")
# A frame: `    addr symbol+offset (dso)`.
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def stacks(lines):
    """Each sample's frames, outermost first."""
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield list(reversed(frames))
            frames = []
            continue
        match = FRAME.match(line)
        if match:
            symbol, dso = match.groups()
            symbol = re.sub(r"\+0x[0-9a-f]+$", "", symbol)
            if symbol == "[unknown]":
                symbol = "[" + dso.rsplit("/", 1)[-1] + "]"
            frames.append(symbol)
    if frames:
        yield list(reversed(frames))


def tree(samples):
    """A nested count: each node is [count, {child name: node}]."""
    root = [0, {}]
    for frames in samples:
        node = root
        node[0] += 1
        for name in frames:
            node = node[1].setdefault(name, [0, {}])
            node[0] += 1
    return root


def boxes(node, total, x, depth, out):
    """Every frame's box, as (x, depth, width, name, count)."""
    for name, child in sorted(node[1].items()):
        width = child[0] / total * WIDTH
        if child[0] / total >= MIN_SHARE:
            out.append((x, depth, width, name, child[0]))
            boxes(child, total, x, depth + 1, out)
        x += width
    return out


def colour(name):
    """Warm for our code, grey for the kernel, tan for the rest."""
    if name.startswith("forkful"):
        return "rgb(230,120,60)"
    if "[kernel" in name or name.startswith(("__x64", "do_syscall", "entry_")):
        return "rgb(180,180,190)"
    seed = sum(map(ord, name)) % 60
    return f"rgb({200 + seed // 2},{160 + seed},{90})"


def svg(root, title):
    total = max(root[0], 1)
    found = boxes(root, total, 0.0, 0, [])
    depth = max((d for _, d, _, _, _ in found), default=0) + 1
    height = (depth + 3) * ROW
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'font-family="monospace" font-size="11">',
        f'<text x="4" y="{ROW}">{html.escape(title)} ({total} samples)</text>',
    ]
    for x, d, width, name, count in found:
        y = height - (d + 1) * ROW
        share = count / total * 100
        label = name if len(name) * 7 < width else name[: max(int(width / 7) - 2, 0)] + ".."
        out.append(
            f'<g><title>{html.escape(name)}: {count} samples, {share:.2f}%</title>'
            f'<rect x="{x:.1f}" y="{y}" width="{max(width - 0.5, 0.1):.1f}" height="{ROW - 1}" '
            f'fill="{colour(name)}"/>'
        )
        if width > 21:
            out.append(f'<text x="{x + 2:.1f}" y="{y + ROW - 4}">{html.escape(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--title", default="flamegraph")
    args = parser.parse_args()
    root = tree(stacks(sys.stdin))
    if root[0] == 0:
        sys.exit("flamegraph.py: no samples on stdin (perf script's output)")
    sys.stdout.write(svg(root, args.title))


if __name__ == "__main__":
    main()
