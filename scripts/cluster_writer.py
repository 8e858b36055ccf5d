#!/usr/bin/env python3
"""The writer loop of scripts/cluster.sh: a cook who edits and forks at a
steady rate, through one node or several in turn, and times each write and,
on a site past one machine, how long it takes to show on the other nodes.

    cluster_writer.py --nodes http://127.0.0.1:8081,http://127.0.0.1:8082 \\
        --slugs slugs.txt --rate 20 --seconds 20 --run 1

Write k goes to node k mod n: an even k edits the cook's own recipe (made at
the start), an odd k forks a recipe of the catalog (slugs.txt, one a line)
under an address the site chooses. A write's latency is its POST's round
trip, the form's GET before it not counted. On a log (the 303 sets the
read-your-writes cookie), each other node is then asked in turn, as a
reader with no cookies, for the page the 303 points to, until it shows the
version just written; the time from the 303 to the first answer that does
is that node's lag: the time from PostgreSQL's commit to the write being
shown there, plus the local apply before the 303, less whatever part of the
answering request came after the write was shown.

With --rate 0 the cook writes as fast as the site acknowledges: each write
as soon as the one before was answered (scripts/cluster.sh runs several
such cooks at once, each its own process, for a site's full write rate).
With --cook FILE the cook is signed up and their recipe made once, and
FILE keeps their cookies and recipe for the next runs: sign-ups are
limited per address, and a run of many cooks would meet that limit.

With --no-lag the other nodes are not asked: the asking is a client
polling two nodes every millisecond, which takes a share of the CPUs that
the node whose reads are measured shares with it, and that the embedded
run, with no other node to ask, does not pay.

Prints one line of figures, then each write's latency and each lag, and exits non-zero if a write
failed or a node never showed one within 5 s. Standard library only.
"""

import argparse
import html
import json
import http.client
import random
import re
import sys
import time
import urllib.parse

BROWSER_ENCODINGS = "gzip, deflate, br, zstd"
SHOW_WITHIN = 5.0
# The pause between rounds of asking the other nodes: asked back to back,
# this loop took a share of the CPUs the nodes it measures share with it,
# which the embedded run, with no other node to ask, did not pay. A lag is
# measured up to this much long.
PROBE_PAUSE = 0.001


class Node:
    """One node's keep-alive connection; the cook's cookies are shared by
    every node, as a browser behind a proxy shares them."""

    def __init__(self, origin, jar):
        url = urllib.parse.urlsplit(origin)
        self.origin = origin
        self.host, self.port = url.hostname, url.port
        self.jar = jar
        self.conn = None

    def request(self, method, path, form=None, cookies=True):
        headers = {"Accept-Encoding": "identity", "Origin": self.origin}
        if cookies and self.jar:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.jar.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        # A keep-alive connection the server closed is made again, once,
        # for a GET only: a POST is never sent twice.
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt == 2 or method != "GET":
                    raise
        if cookies:
            for header in response.msg.get_all("Set-Cookie") or []:
                name, _, rest = header.partition("=")
                value = rest.split(";", 1)[0]
                if "max-age=0" in header.lower().replace(" ", ""):
                    self.jar.pop(name, None)
                else:
                    self.jar[name] = value
        return response, data.decode("utf-8", "replace")


def hidden_fields(page, action):
    """The hidden inputs (the token among them) of the form posting to action."""
    form = re.search(
        r'<form[^>]*action="' + re.escape(action) + r'"[^>]*>(.*?)</form>', page, re.S
    )
    if not form:
        raise SystemExit(f"cluster_writer: no form posting to {action}:\n{page[:2000]}")
    fields = {}
    for tag in re.findall(r"<input[^>]*>", form.group(1)):
        if 'type="hidden"' not in tag:
            continue
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[html.unescape(name.group(1))] = html.unescape(value.group(1) if value else "")
    return fields


def content(run, k):
    return {
        "title": f"Cluster bread {run}-{k}",
        "summary": f"A loaf written by the cluster run {run}, write {k}.",
        "servings": str(2 + k % 6),
        "ingredients": "500 g flour\n350 g water\n10 g salt\n" + f"{k % 9 + 1} g yeast",
        "steps": "Mix everything.\n\nLeave overnight.\n\nBake hot.",
        "tags": "bread, cluster",
        "note": f"write {k}",
    }


def post_form(node, form_path, action, fields):
    """GETs the form, then POSTs it; returns (status, seconds of the POST,
    the answer's text, its Location)."""
    response, page = node.request("GET", form_path)
    if response.status != 200:
        return response.status, 0.0, page, None
    form = hidden_fields(page, action)
    form.update(fields)
    started = time.perf_counter()
    response, page = node.request("POST", action, form=form)
    took = time.perf_counter() - started
    return response.status, took, page, response.getheader("Location")


def shows(node, path, title):
    """Whether the node's page at path shows the version titled title, as
    a reader with no cookies gets it."""
    response, body = node.request("GET", path, cookies=False)
    return response.status == 200 and html.escape(title) in body


def cook_up(node, jar, run, kept):
    """Signs a cook up and makes their recipe, or reads both back from the
    file `kept` where an earlier run left them; returns the recipe's slug."""
    if kept:
        try:
            with open(kept) as f:
                saved = json.load(f)
            jar.update(saved["cookies"])
            return saved["recipe"]
        except FileNotFoundError:
            pass
    cook = f"writer{run}".replace("-", "")
    status, _, _, _ = post_form(
        node, "/signup", "/signup",
        {"handle": cook, "name": cook, "password": "a long cluster password"},
    )
    if status != 303:
        raise SystemExit(f"cluster_writer: signing {cook} up answered {status}")
    own = f"cluster-{run}"
    status, _, _, _ = post_form(node, "/recipes/new", "/recipes/new", dict(content(run, -1), slug=own))
    if status != 303:
        raise SystemExit(f"cluster_writer: creating {own} answered {status}")
    if kept:
        with open(kept, "w") as f:
            json.dump({"cookies": jar, "recipe": own}, f)
    return own


def percentile(values, p):
    """Nearest rank: the smallest value with at least p% at or below it."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", required=True, help="origins, comma-separated")
    parser.add_argument("--slugs", required=True, help="a file of catalog slugs, one a line")
    parser.add_argument(
        "--rate", type=float, default=20.0,
        help="writes a second; 0: each as soon as the one before was acknowledged",
    )
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--run", required=True, help="names this run's cook and recipes")
    parser.add_argument(
        "--cook", help="a file keeping the cook's cookies and recipe from one run to the next",
    )
    parser.add_argument(
        "--no-lag", action="store_true",
        help="do not ask the other nodes for each write (a run measuring one node's reads)",
    )
    args = parser.parse_args()

    jar = {}
    nodes = [Node(origin, jar) for origin in args.nodes.split(",")]
    # Probes of /healthz, on connections of their own.
    probes = [Node(origin, {}) for origin in args.nodes.split(",")]
    with open(args.slugs) as f:
        slugs = [line.strip() for line in f if line.strip()]
    rng = random.Random(args.run)
    own = cook_up(nodes[0], jar, args.run, args.cook)

    latencies, lags, failed, unseen = [], [], {}, 0
    started = time.perf_counter()
    k = 0
    while time.perf_counter() - started < args.seconds:
        # Writes on a fixed schedule: a slow one is not made up for by
        # sending the next ones closer together.
        if args.rate > 0:
            due = started + k / args.rate
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
        node = nodes[k % len(nodes)]
        written = content(args.run, k)
        if k % 2 == 0:
            path = f"/recipes/{own}/edit"
            status, took, answer, location = post_form(node, path, path, written)
        else:
            parent = rng.choice(slugs)
            path = f"/recipes/{parent}/fork"
            status, took, answer, location = post_form(node, path, path, dict(written, slug=""))
        acknowledged = time.perf_counter()
        k += 1
        if status != 303:
            if not failed:
                text = re.sub(r"<[^>]*>|\s+", " ", answer)
                print(f"cluster_writer: {path} answered {status}: {text[:600]}", file=sys.stderr)
            failed[status] = failed.get(status, 0) + 1
            continue
        latencies.append(took)
        others = [p for i, p in enumerate(probes) if i != (k - 1) % len(nodes)]
        if "forkful_seen" not in jar or not others or args.no_lag:
            continue  # one node, no log, or not asked: nothing to follow
        waiting = list(others)
        while waiting and time.perf_counter() - acknowledged < SHOW_WITHIN:
            for probe in list(waiting):
                if shows(probe, location, written["title"]):
                    lags.append(time.perf_counter() - acknowledged)
                    waiting.remove(probe)
            if waiting:
                time.sleep(PROBE_PAUSE)
        unseen += len(waiting)

    elapsed = time.perf_counter() - started
    ms = lambda s: s * 1000  # noqa: E731
    print(
        "WRITER writes=%d rate=%.1f failed=%s write_p50=%.2f write_p99=%.2f write_max=%.2f "
        "lags=%d lag_p50=%.2f lag_p99=%.2f lag_max=%.2f unseen=%d"
        % (
            len(latencies), len(latencies) / elapsed,
            ",".join(f"{s}:{n}" for s, n in sorted(failed.items())) or "0",
            ms(percentile(latencies, 50)), ms(percentile(latencies, 99)),
            ms(max(latencies, default=float("nan"))),
            len(lags), ms(percentile(lags, 50)), ms(percentile(lags, 99)),
            ms(max(lags, default=float("nan"))), unseen,
        )
    )
    # The raw figures, for pooling rounds: one line each, in milliseconds.
    for took in latencies:
        print(f"WRITE {ms(took):.3f}")
    for lag in lags:
        print(f"LAG {ms(lag):.3f}")
    if failed or unseen:
        sys.exit(1)


if __name__ == "__main__":
    main()
