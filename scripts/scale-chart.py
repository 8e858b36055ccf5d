#!/usr/bin/env python3
"""Draws how each of scripts/scale.sh's figures grows with the catalog: an
SVG of small charts, one a figure, each against the number of recipes, both
axes logarithmic, with two guides from the smallest catalog's point: flat
(a cost that does not grow) and in proportion to the recipes (a cost that
grows as the catalog does). A figure's line lying along the first is
bounded; along the second, it grows with the catalog.

    scripts/scale-chart.py OUT.svg FILE...

Every `SCALE ...` line of the FILEs (scale.sh's output, or the journal
that quotes it) is read; of two for one catalog size, the later is drawn.
Standard library only. docs/scale.svg is drawn so:

    scripts/scale-chart.py docs/scale.svg docs/journal/55-million.md
"""

import math
import sys

# (key in the SCALE line, title, unit, how it should grow to be healthy)
FIGURES = [
    ("seed_s", "seed: time", "s", "grows with the catalog"),
    ("seed_mib", "seed: peak RSS", "MiB", "bounded"),
    ("import_s", "import: time", "s", "grows with the catalog"),
    ("import_mib", "import: peak RSS", "MiB", "bounded"),
    ("store_mib", "store on disk", "MiB", "grows with the catalog"),
    ("crawl_pages_s", "crawl: pages/s", "pages/s", "bounded"),
    ("crawl_p99_ms", "crawl: p99", "ms", "bounded"),
    ("crawl_mib", "crawl: server's peak RSS", "MiB", "bounded"),
    ("catalog_ms", "catalog, cold", "ms", "bounded"),
    ("recipe_ms", "deepest recipe, cold", "ms", "bounded"),
    ("tag_ms", "a tag, cold", "ms", "bounded"),
    ("sitemap_ms", "sitemap index, cold", "ms", "bounded"),
    ("sitemap_file_ms", "last sitemap file, cold", "ms", "bounded"),
    ("search_ms", "a common word searched, cold", "ms", "bounded"),
]

COLUMNS = 4
PANEL_W, PANEL_H = 230, 170
PLOT_X, PLOT_Y, PLOT_W, PLOT_H = 48, 34, 168, 100


def read_scale(paths):
    runs = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.startswith("SCALE "):
                    fields = dict(kv.split("=", 1) for kv in line.split()[1:])
                    run = {k: (float(v) if v not in ("-", "") else None) for k, v in fields.items()}
                    runs[run["recipes"]] = run
    if not runs:
        raise SystemExit(f"scale-chart: no SCALE line in {' '.join(paths)}")
    return [runs[n] for n in sorted(runs)]


def nice(value):
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{value:.2f}".rstrip("0").rstrip(".")


def panel(out, x0, y0, runs, key, title, unit, healthy):
    points = [(r["recipes"], r.get(key)) for r in runs if r.get(key) not in (None, 0)]
    out.append(f'<g transform="translate({x0},{y0})">')
    out.append(f'<text x="{PANEL_W / 2}" y="16" text-anchor="middle" class="t">{title}</text>')
    out.append(f'<text x="{PANEL_W / 2}" y="28" text-anchor="middle" class="s">{unit}; {healthy}</text>')
    out.append(f'<rect x="{PLOT_X}" y="{PLOT_Y}" width="{PLOT_W}" height="{PLOT_H}" class="f"/>')
    if not points:
        out.append(f'<text x="{PLOT_X + 8}" y="{PLOT_Y + 50}" class="s">not measured</text></g>')
        return
    sizes = [n for n, _ in points]
    n0, v0 = points[0]
    # Guides from the first point: flat, and in proportion to the recipes.
    guides = [v0, v0 * max(sizes) / n0]
    values = [v for _, v in points] + guides
    lo_n, hi_n = math.log10(min(sizes)), math.log10(max(sizes))
    lo_v, hi_v = math.log10(min(values)), math.log10(max(values))
    if hi_v - lo_v < 1:  # at least a decade, so flat looks flat
        middle = (hi_v + lo_v) / 2
        lo_v, hi_v = middle - 0.5, middle + 0.5
    span_n = (hi_n - lo_n) or 1

    def at(n, v):
        x = PLOT_X + (math.log10(n) - lo_n) / span_n * PLOT_W
        y = PLOT_Y + PLOT_H - (math.log10(v) - lo_v) / (hi_v - lo_v) * PLOT_H
        return x, y

    (fx0, fy0), (fx1, fy1) = at(n0, v0), at(max(sizes), v0)
    out.append(f'<line x1="{fx0:.1f}" y1="{fy0:.1f}" x2="{fx1:.1f}" y2="{fy1:.1f}" class="flat"/>')
    (px1, py1) = at(max(sizes), guides[1])
    out.append(f'<line x1="{fx0:.1f}" y1="{fy0:.1f}" x2="{px1:.1f}" y2="{py1:.1f}" class="prop"/>')
    path = " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in
                    enumerate(at(n, v) for n, v in points))
    out.append(f'<path d="{path}" class="line"/>')
    for n, v in points:
        x, y = at(n, v)
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" class="dot"/>')
        anchor = "end" if n == max(sizes) else "start"
        dx = -5 if anchor == "end" else 5
        # Above the point, or below it at the top of the plot.
        label_y = y + 14 if y < PLOT_Y + 14 else y - 5
        out.append(f'<text x="{x + dx:.1f}" y="{label_y:.1f}" text-anchor="{anchor}" class="v">{nice(v)}</text>')
    for n in sizes:
        x, _ = at(n, v0)
        label = f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k"
        out.append(f'<text x="{x:.1f}" y="{PLOT_Y + PLOT_H + 14}" text-anchor="middle" class="s">{label}</text>')
    out.append("</g>")


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    runs = read_scale(sys.argv[2:])
    rows = -(-len(FIGURES) // COLUMNS)
    width, height = COLUMNS * PANEL_W, rows * PANEL_H + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
        "<style>.t{font-size:12px;font-weight:bold}.s{font-size:10px;fill:#555}"
        ".v{font-size:10px}.f{fill:#fafafa;stroke:#ccc}.line{fill:none;stroke:#1f5fa8;stroke-width:2}"
        ".dot{fill:#1f5fa8}.flat{stroke:#2a8a3a;stroke-dasharray:4 3}"
        ".prop{stroke:#c0392b;stroke-dasharray:4 3}</style>",
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for i, (key, title, unit, healthy) in enumerate(FIGURES):
        panel(out, (i % COLUMNS) * PANEL_W, (i // COLUMNS) * PANEL_H, runs, key, title, unit, healthy)
    legend_y = rows * PANEL_H + 14
    out.append(
        f'<text x="10" y="{legend_y}" class="s">Recipes (log scale) against each figure (log scale). '
        '<tspan fill="#2a8a3a">Green dashes: flat from the smallest catalog</tspan>; '
        '<tspan fill="#c0392b">red dashes: in proportion to the recipes</tspan>.</text>'
    )
    out.append(
        f'<text x="10" y="{legend_y + 14}" class="s">Drawn by scripts/scale-chart.py from '
        "scripts/scale.sh's SCALE lines, one run at each size.</text>"
    )
    out.append("</svg>")
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
