#!/usr/bin/env python3
"""The MPD protocol face beside mpd and Mopidy (mopidy-mpd), in one run, over raw sockets:
`status` round trip p50/p99, `playlistinfo` of a 10,000-entry queue, and idle wake-up after a pause toggle
sent by a second client; for tonearm also the same pause's MPRIS PropertiesChanged (dbus-monitor on its private bus)
and how much later the idle wake came than it (the goal: no later). Prints a Markdown table with ratios (tonearm /
peer). Never fails on a time.

  Benchmarks/mpd-protocol.py [--tonearmd PATH] [--calls N] [--queue N] [--wakes N]
"""
import argparse, os, re, shutil, signal, socket, statistics, struct, subprocess, sys, tempfile, threading, time, wave, math

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import command, connect, env_for, free_port, start_bus  # noqa: E402


class StatusSignals:
    """dbus-monitor on a private bus, writing to a file read only after the measured span (a thread parsing its output
    as the signals came would hold Python's GIL just when the idle client's wake is timed): each PlaybackStatus in a
    PropertiesChanged, with dbus-monitor's own receive time (the `time=` of its header line, wall clock)."""
    def __init__(self, address, folder):
        self.path = os.path.join(folder, "dbus-monitor.out")
        self.out = open(self.path, "wb")
        self.proc = subprocess.Popen(["dbus-monitor", "--address", address,
                                      "type='signal',path='/org/mpris/MediaPlayer2',member='PropertiesChanged'"],
                                     stdout=self.out, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(3000):   # it prints NameLost for its own name once it is a monitor
            if b"member=NameLost" in open(self.path, "rb").read():
                break
            time.sleep(0.01)

    def times(self):
        """The receive times of the PlaybackStatus changes so far."""
        found, header, want = [], None, False
        for line in open(self.path, encoding="utf-8", errors="replace"):
            if not line.startswith(" "):
                m = re.search(r"time=([\d.]+)", line)
                header, want = (float(m.group(1)) if m else None), False
            elif 'string "PlaybackStatus"' in line:
                want = True
            elif want and header is not None:
                found.append(header)
                want = False
        return found

    def stop(self):
        try: os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError: pass
        self.proc.wait(10)
        self.out.close()


def round_trip(s, line):
    """Sends one command and reads its reply whole with recv, not a readline per line: Python's per-line cost would
    count a reply's lines (tonearm's status has 15 lines stopped, mpd's 9) as the server's time."""
    s.sendall(line)
    data = b""
    while not (data == b"OK\n" or data.endswith(b"\nOK\n") or (b"ACK " in data and data.endswith(b"\n"))):
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return data


def measure(port, song_uri, calls, queue, wakes, signals=None):
    s, f = connect(port)
    command(f, "clear")
    f.write(b"command_list_begin\n" + (f"add {song_uri}\n" * queue).encode() + b"command_list_end\n"); f.flush()
    while True:
        l = f.readline()
        if l == b"OK\n" or l.startswith(b"ACK") or not l:
            break
    times = []
    for _ in range(calls):
        t = time.perf_counter(); round_trip(s, b"status\n"); times.append(time.perf_counter() - t)
    times.sort()
    p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99) - 1]
    length = int([l for l in command(f, "status")[0] if l.startswith(b"playlistlength")][0].split()[1])
    pl = []
    for _ in range(5):
        t = time.perf_counter(); lines, _ = command(f, "playlistinfo"); pl.append(time.perf_counter() - t)
    command(f, "play 0")
    i, fi = connect(port)
    w, spans, sig, late = [], [], [], []
    for _ in range(wakes):
        command(fi, "ping")
        fi.write(b"idle player\n"); fi.flush()
        time.sleep(0.05)  # let the idle reach the server; the measured span starts at the toggle
        # The pause's own reply is read after the idle wake: waiting for it first would time the later of the two.
        wall = time.time(); t = time.perf_counter(); f.write(b"pause\n"); f.flush()
        while fi.readline() != b"OK\n":
            pass
        w.append(time.perf_counter() - t)
        spans.append((wall, wall + w[-1]))
        while f.readline() != b"OK\n":
            pass
    command(f, "stop")
    if signals:
        time.sleep(0.5)  # the last signal's line reaches the file
        heard = signals.times()
        for sent, woke in spans:
            first = next((h for h in heard if h >= sent), None)
            if first is not None and first - sent < 1:
                sig.append(first - sent); late.append(woke - first)
    out = {"status p50 (ms)": p50 * 1e3, "status p99 (ms)": p99 * 1e3,
           f"playlistinfo of {length} (ms, median of 5)": statistics.median(pl) * 1e3,
           "idle wake after pause (ms, median)": statistics.median(w) * 1e3}
    if signals:
        out["same pause's MPRIS PropertiesChanged (ms, median)"] = statistics.median(sig) * 1e3 if sig else None
        out["idle wake − PropertiesChanged (ms, median; ≤ 0 is the goal)"] = statistics.median(late) * 1e3 if late else None
    return out

def sine(path, seconds=60):
    w = wave.open(path, "w"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(11025)
    w.writeframes(b"".join(struct.pack("<h", int(3000 * math.sin(i * 0.25))) for i in range(int(11025 * seconds)))); w.close()

def main():
    a = argparse.ArgumentParser()
    a.add_argument("--tonearmd", default=os.path.join(os.path.dirname(__file__), "../.build/release/tonearmd"))
    a.add_argument("--calls", type=int, default=2000)
    a.add_argument("--queue", type=int, default=10000)
    a.add_argument("--wakes", type=int, default=20)
    o = a.parse_args()
    home = tempfile.mkdtemp(prefix="mpd-bench-")
    music = os.path.join(home, "Music"); os.makedirs(music)
    sine(os.path.join(music, "song.wav"))
    results, procs = {}, []
    try:
        # tonearm on a private session bus
        port = free_port()
        cfg = os.path.join(home, "config/tonearm"); os.makedirs(cfg)
        open(os.path.join(cfg, "config.toml"), "w").write(
            f'[plugins.library]\nfolders = ["{music}"]\n[mpd-protocol]\nenabled = true\nport = {port}\n')
        bus, address = start_bus()
        procs.append(bus)
        p = subprocess.Popen([os.path.abspath(o.tonearmd), "--audio-sink", "fakesink sync=true"],
                             env=env_for(home, address), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        procs.insert(0, p)
        signals = StatusSignals(address, home)
        _, tf = connect(port)
        for _ in range(300):
            if any(l.startswith(b"songs: 1") for l in command(tf, "stats")[0]): break
            time.sleep(0.1)
        results["tonearm"] = measure(port, "song.wav", o.calls, o.queue, o.wakes, signals)
        signals.stop()
        # mpd
        if shutil.which("mpd"):
            mport = free_port(); mdir = os.path.join(home, "mpd"); os.makedirs(mdir)
            conf = os.path.join(mdir, "mpd.conf")
            open(conf, "w").write(f'music_directory "{music}"\ndb_file "{mdir}/db"\nstate_file "{mdir}/state"\n'
                                  f'bind_to_address "127.0.0.1"\nport "{mport}"\nmax_playlist_length "20000"\n'
                                  f'audio_output {{\n type "null"\n name "null"\n}}\n')
            mp = subprocess.Popen(["mpd", "--no-daemon", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            procs.append(mp)
            _, mf = connect(mport)
            command(mf, "update")
            for _ in range(100):
                if any(l.startswith(b"songs: 1") for l in command(mf, "stats")[0]): break
                time.sleep(0.1)
            results["mpd"] = measure(mport, "song.wav", o.calls, o.queue, o.wakes)
        else:
            results["mpd"] = None
        # Mopidy with mopidy-mpd
        # Debian's mopidy runs on the system Python, whatever python3 runs this script (a pyenv one, say).
        mopidy = shutil.which("mopidy")
        mopidy_python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
        if mopidy and subprocess.run([mopidy_python, "-c", "import mopidy_mpd"], capture_output=True).returncode == 0:
            yport = free_port(); ydir = os.path.join(home, "mopidy"); os.makedirs(ydir)
            conf = os.path.join(ydir, "mopidy.conf")
            open(conf, "w").write(f"[core]\ncache_dir = {ydir}/cache\ndata_dir = {ydir}/data\nmax_tracklist_length = 20000\n"
                                  f"[audio]\noutput = fakesink sync=true\n[mpd]\nhostname = 127.0.0.1\nport = {yport}\n"
                                  f"[file]\nmedia_dirs = {music}\n[http]\nenabled = false\n[m3u]\nenabled = false\n")
            yp = subprocess.Popen(["mopidy", "--config", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            procs.append(yp)
            results["mopidy"] = measure(yport, "file://" + os.path.join(music, "song.wav"), o.calls, o.queue, o.wakes)
        else:
            results["mopidy"] = None
    finally:
        for p in procs:
            try: os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError: pass
        for p in procs: p.wait(timeout=300)
        shutil.rmtree(home, ignore_errors=True)
    rows = list(results["tonearm"].keys())
    print("| metric (lower is better) | tonearm | mpd | mopidy | tonearm ÷ mpd | tonearm ÷ mopidy |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        t = results["tonearm"][r]
        cells = ["no signal" if t is None else f"{t:.3f}"]
        for peer in ["mpd", "mopidy"]:
            v = None if results[peer] is None else results[peer].get(r)
            cells.append("not installed" if results[peer] is None else "—" if v is None else f"{v:.3f}")
        for peer in ["mpd", "mopidy"]:
            v = None if results[peer] is None else results[peer].get(r)
            cells.append("—" if v is None or t is None else f"{t / v:.2f}")
        print(f"| {r} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
