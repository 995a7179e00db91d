#!/usr/bin/env python3
"""UPnP AV renderers driven by one control point (Tests/IntegrationTests/upnp/controlpoint.py on async-upnp-client,
pinned in scripts/upnp-venv): tonearmd's MediaRenderer beside Debian's gmediarender, or any renderer command given.
Each run of each renderer is in a fresh network namespace (scripts/netns-run --bridge: loopback, and a portless
bridge for libupnp) with a minidlna serving a generated 120 s FLAC, and measures:

- start → discoverable: the renderer spawned → the first answer to M-SEARCH (searching again every 0.2 s);
- M-SEARCH → first answer (MX=1, median of --searches single searches; a responder may wait up to MX);
- cast → first audio: SetAVTransportURI + Play → the renderer's sink file holds data (a raw S16LE `filesink
  sync=true`, so it plays in real time; for a custom renderer without {out}: → RelTime past 0 in GetPositionInfo);
- cast → PLAYING in GetTransportInfo;
- Seek → position reported: Seek REL_TIME, then GetPositionInfo until RelTime is within 1 s of the target;
- RSS (VmRSS) and CPU (utime + stime over --cpu-seconds) while playing.

Prints a Markdown table with tonearm ÷ the best peer (lower is better on every row). Never fails on a time.

  Benchmarks/upnp.py [--tonearmd PATH] [--renderer 'COMMAND' ...] [--runs N] [--searches N] [--cpu-seconds S]
                     [--skip-tonearm] [--skip-gmediarender]

--renderer COMMAND: a shell command that starts a renderer in the foreground; {out} in it is replaced by the raw
audio file to write (e.g. --renderer 'gmediarender -I upnp0 -f Other --gstout-audiopipe "audioconvert !
audio/x-raw,format=S16LE ! filesink sync=true location={out}"'). A command whose program is tonearmd is started as
the tonearm one is (XDG folders, config.toml, a private session bus), its own arguments appended.
"""
import argparse, asyncio, importlib.util, json, os, shlex, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TRACK_SECONDS = 120
SEEKS = ["0:00:30", "0:00:10", "0:01:00"]
RAW_SINK = "audioconvert ! audio/x-raw,format=S16LE ! filesink sync=true location={out}"
GMEDIARENDER = f"gmediarender -I upnp0 -f 'Bench gmediarender' --gstout-audiopipe '{RAW_SINK}'"


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The process and session helpers of the web face benchmark (spawn, stop, session_env, start_bus, …): one copy.
bench = load("web_face_bench", os.path.join(HERE, "web-face.py"))


# ---- one run, inside the namespace --------------------------------------------------------------------------------

def seconds(rel):
    h, m, s = (rel or "0:0:0").split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def start_renderer(spec, root):
    """(process, pid to measure, output file or None) for spec {"kind": "tonearm"|"command", "command": …}."""
    out = os.path.join(root, "out.raw")
    words = shlex.split(spec["command"])
    if os.path.basename(words[0]) == "tonearmd":
        env = bench.session_env(os.path.join(root, "home"))
        env["DBUS_SESSION_BUS_ADDRESS"] = bench.start_bus(os.path.join(root, "home"), env)
        cfg = os.path.join(env["XDG_CONFIG_HOME"], "tonearm")
        os.makedirs(cfg, exist_ok=True)
        with open(os.path.join(cfg, "config.toml"), "w") as f:
            f.write(f'audio-sink = "{RAW_SINK.format(out=out)}"\n'
                    '[plugins.upnp]\nenabled = true\nname = "Tonearm bench"\nport = 0\n')
        p = bench.spawn(words, log=os.path.join(root, "renderer.log"), env=env)
        return p, p.pid, out
    uses_out = "{out}" in spec["command"]
    p = bench.spawn(["sh", "-c", "exec " + spec["command"].replace("{out}", out)], log=os.path.join(root, "renderer.log"))
    return p, p.pid, out if uses_out else None


async def measure_one(o, spec):
    cp = load("controlpoint", os.path.join(REPO, "Tests/IntegrationTests/upnp/controlpoint.py"))
    root = tempfile.mkdtemp(prefix="upnp-bench-")
    result = {}
    try:
        bench.spawn([os.path.join(REPO, "scripts/upnp-minidlna"), o.media, "8200", os.path.join(root, "minidlna")],
                    log=os.path.join(root, "minidlna.log"))
        items = (await cp.browse("http://127.0.0.1:8200/rootDesc.xml", 1, 60))["items"]
        if not items:
            raise RuntimeError("minidlna listed nothing")
        item = items[0]

        t0 = time.monotonic()
        p, pid, out = start_renderer(spec, root)
        found = await cp.discover(cp.RENDERER, o.discover_timeout, 1, 0.2, True)
        if not found["devices"]:
            log = open(os.path.join(root, "renderer.log"), errors="replace").read()[-1500:]
            return {"error": "tonearmd has no UPnP renderer" if spec["kind"] == "tonearm" else
                    f"no MediaRenderer answered M-SEARCH in {o.discover_timeout:.0f} s", "log": log}
        result["start → discoverable (ms)"] = (time.monotonic() - t0) * 1e3
        location = found["devices"][0]["location"]
        result["renderer"] = found["devices"][0].get("friendlyName")

        firsts = []
        for _ in range(o.searches):
            d = await cp.discover(cp.RENDERER, 10, 1, 0, True)
            if d["first_seconds"] is not None:
                firsts.append(d["first_seconds"] * 1e3)
        result["M-SEARCH → first answer, MX=1, median (ms)"] = statistics.median(firsts) if firsts else None

        device = await cp.device_at(location)
        t0 = time.monotonic()
        await cp.call(device, "AVTransport", "SetAVTransportURI", {"CurrentURI": item["url"], "CurrentURIMetaData": item["didl"]})
        await cp.call(device, "AVTransport", "Play", {})
        playing_at = audio_at = None
        deadline = t0 + 60
        while (playing_at is None or audio_at is None) and time.monotonic() < deadline:
            if audio_at is None:
                if out is not None:
                    if os.path.exists(out) and os.path.getsize(out) > 0:
                        audio_at = time.monotonic()
                elif seconds((await cp.call(device, "AVTransport", "GetPositionInfo", {}))["RelTime"]) > 0:
                    audio_at = time.monotonic()
            if playing_at is None:
                state = (await cp.call(device, "AVTransport", "GetTransportInfo", {}))["CurrentTransportState"]
                if state == "PLAYING":
                    playing_at = time.monotonic()
            await asyncio.sleep(0.002)
        result["cast → first audio (ms)"] = (audio_at - t0) * 1e3 if audio_at else None
        result["first audio seen by"] = "sink file" if out else "RelTime > 0"
        result["cast → PLAYING in GetTransportInfo (ms)"] = (playing_at - t0) * 1e3 if playing_at else None

        seeks = []
        for target in SEEKS:
            t0 = time.monotonic()
            await cp.call(device, "AVTransport", "Seek", {"Unit": "REL_TIME", "Target": target})
            while time.monotonic() < t0 + 30:
                pos = await cp.call(device, "AVTransport", "GetPositionInfo", {})
                if pos["TrackURI"] and abs(seconds(pos["RelTime"]) - seconds(target)) <= 1:
                    seeks.append((time.monotonic() - t0) * 1e3)
                    break
                await asyncio.sleep(0.002)
        result["Seek → position within 1 s, median (ms)"] = statistics.median(seeks) if seeks else None
        result["seeks landed"] = f"{len(seeks)} of {len(SEEKS)}"

        # A measurement window, not a wait for a state: CPU is counted over it while the track plays on.
        await cp.call(device, "AVTransport", "Seek", {"Unit": "REL_TIME", "Target": "0:00:05"})
        c0, w0 = bench.cpu_seconds(pid), time.monotonic()
        await asyncio.sleep(o.cpu_seconds)
        cpu = bench.cpu_seconds(pid) - c0
        state = (await cp.call(device, "AVTransport", "GetTransportInfo", {}))["CurrentTransportState"]
        result["CPU while playing (% of one core)"] = cpu / (time.monotonic() - w0) * 100
        result["RSS while playing (MiB)"] = bench.rss_mib(pid)
        result["state after the CPU window"] = state
        await cp.call(device, "AVTransport", "Stop", {})
        return result
    finally:
        bench.stop_all()
        shutil.rmtree(root, ignore_errors=True)


def inner(o):
    print(json.dumps(asyncio.run(measure_one(o, json.loads(o.inner)))), flush=True)


# ---- outside: runs, table ------------------------------------------------------------------------------------------

ROWS = ["start → discoverable (ms)", "M-SEARCH → first answer, MX=1, median (ms)", "cast → first audio (ms)",
        "cast → PLAYING in GetTransportInfo (ms)", "Seek → position within 1 s, median (ms)",
        "RSS while playing (MiB)", "CPU while playing (% of one core)"]


def make_media(folder):
    os.makedirs(folder)
    subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", f"num-buffers={TRACK_SECONDS * 44100 // 1024}", "freq=330",
                    "!", "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!", "taginject",
                    "tags=title=UpnpBench", "!", "flacenc", "!", "filesink", f"location={folder}/bench.flac"], check=True)


def run_one(o, venv_python, spec, media):
    args = [os.path.join(REPO, "scripts/netns-run"), "--bridge", venv_python, "-X", "dev", os.path.abspath(__file__),
            "--inner", json.dumps(spec), "--media", media, "--searches", str(o.searches),
            "--cpu-seconds", str(o.cpu_seconds), "--discover-timeout", str(o.discover_timeout)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=600)   # a guard for a hung renderer
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return {"error": f"the run failed (exit {r.returncode}): {r.stderr[-1500:]}"}


def fmt(v):
    return "–" if v is None else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--tonearmd", default=os.path.join(REPO, ".build/release/tonearmd"))
    a.add_argument("--renderer", action="append", default=[], help="a renderer command (repeatable)")
    a.add_argument("--runs", type=int, default=3)
    a.add_argument("--searches", type=int, default=10)
    a.add_argument("--cpu-seconds", type=float, default=10)
    a.add_argument("--discover-timeout", type=float, default=20)
    a.add_argument("--skip-tonearm", action="store_true")
    a.add_argument("--skip-gmediarender", action="store_true")
    a.add_argument("--inner", help=argparse.SUPPRESS)
    a.add_argument("--media", help=argparse.SUPPRESS)
    o = a.parse_args()
    if o.inner:
        return inner(o)

    venv_python = os.path.join(subprocess.run([os.path.join(REPO, "scripts/upnp-venv")], check=True, capture_output=True,
                                              text=True).stdout.strip(), "python")
    specs = []
    if not o.skip_tonearm:
        specs.append(("tonearm", {"kind": "tonearm", "command": shlex.quote(os.path.abspath(o.tonearmd))}))
    if not o.skip_gmediarender:
        specs.append(("gmediarender", {"kind": "command", "command": GMEDIARENDER}))
    for i, command in enumerate(o.renderer):
        tonearm = os.path.basename(shlex.split(command)[0]) == "tonearmd"
        specs.append((f"renderer {i + 1}", {"kind": "tonearm" if tonearm else "command", "command": command}))

    work = tempfile.mkdtemp(prefix="upnp-bench-media-")
    results, notes = {}, []
    try:
        make_media(os.path.join(work, "media"))
        for name, spec in specs:
            if spec["kind"] == "tonearm" and not os.access(shlex.split(spec["command"])[0], os.X_OK):
                results[name] = {"error": f"no tonearmd at {shlex.split(spec['command'])[0]}"}
                continue
            runs = []
            for k in range(o.runs):
                print(f"upnp: {name}, run {k + 1} of {o.runs}", file=sys.stderr)
                r = run_one(o, venv_python, spec, os.path.join(work, "media"))
                if "error" in r:
                    runs = r
                    break
                runs.append(r)
            if isinstance(runs, dict):
                results[name] = runs
                continue
            results[name] = {row: statistics.median([r[row] for r in runs if r.get(row) is not None] or [None])
                             if any(r.get(row) is not None for r in runs) else None for row in ROWS}
            notes.append(f"{name}: {runs[0].get('renderer')!r}; first audio seen by {runs[0]['first audio seen by']}; "
                         f"seeks landed {', '.join(r['seeks landed'] for r in runs)}; state after the CPU window "
                         f"{', '.join(r['state after the CPU window'] for r in runs)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    names = [n for n, _ in specs]
    peers = [n for n in names if n != "tonearm"]
    print(f"| metric (lower is better) | {' | '.join(names)} | best peer | tonearm ÷ best |")
    print("|---|" + "---:|" * len(names) + "---|---:|")
    for row in ROWS:
        cells = [results[n]["error"] if "error" in results[n] else fmt(results[n][row]) for n in names]
        measured = {n: results[n][row] for n in peers if "error" not in results[n] and results[n][row] is not None}
        best = min(measured, key=measured.get) if measured else None
        t = results.get("tonearm", {})
        ratio = "–"
        if best and "error" not in t and t.get(row) is not None and measured[best]:
            ratio = f"{t[row] / measured[best]:.2f}" + (" (behind)" if t[row] > measured[best] else "")
        print(f"| {row} | {' | '.join(cells)} | {best or '–'} | {ratio} |")
    print()
    print(f"- medians of {o.runs} runs, each in a fresh namespace; {o.searches} single M-SEARCHes per run; seeks to "
          f"{', '.join(SEEKS)}; CPU over {o.cpu_seconds:g} s; a {TRACK_SECONDS} s 44.1 kHz stereo FLAC from minidlna.")
    for n in notes:
        print(f"- {n}")
    for n in names:
        if "error" in results[n]:
            print(f"- {n}: {results[n]['error']}" + (f"; its log ends: {results[n]['log'][-300:]!r}" if results[n].get("log") else ""))


if __name__ == "__main__":
    main()
