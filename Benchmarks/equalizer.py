#!/usr/bin/env python3
"""The graphic equalizer: tonearmd's CPU while playing with the equalizer off and on, and the latency of an equalizer
change to the output.

CPU: a 44.1 kHz stereo file plays to `fakesink sync=true` (real time); tonearmd's CPU (utime + stime from /proc) is
counted over --cpu-seconds with the equalizer off, then with the `loudness` preset (every band moving), alternately,
--runs times; the table gives the medians in % of one CPU.

Latency: a 947 Hz tone plays in real time to `wavenc ! filesink sync=true`; after 2 s, EqualizerBands is set over
D-Bus (-12 dB at 947 Hz). The position read right after the call returns is where the output was then (the sink's
clock); the rendered file then shows where the level first fell (0.5 dB under the level before) and where it reached
-11.5 dB. latency = first change - position at the call; ramp = full - first change. A real device adds its own
buffer (pulsesink: about 200 ms) to both players alike. Never fails on a time.

  Benchmarks/equalizer.py [--tonearmd PATH] [--runs 3] [--cpu-seconds 20] [--latency-runs 5]
"""
import argparse, math, os, signal, statistics, struct, subprocess, sys, tempfile, time, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import cpu_of, env_for, start_bus  # noqa: E402

BUS = "org.mpris.MediaPlayer2.tonearm"
PATH = "/org/mpris/MediaPlayer2"


def busctl(env, *args):
    r = subprocess.run(["busctl", "--user"] + list(args), env=env, capture_output=True, text=True)
    return r.stdout.strip()


def position_us(env):
    out = busctl(env, "get-property", BUS, PATH, "org.mpris.MediaPlayer2.Player", "Position")
    return int(out.split()[1]) if out.startswith("x ") else -1


def set_bands(env, bands):
    busctl(env, "set-property", "--", BUS, PATH, "org.tonearm.Player1", "EqualizerBands", "ad", "10", *[str(b) for b in bands])


def set_eq(env, name):
    busctl(env, "set-property", BUS, PATH, "org.tonearm.Player1", "Equalizer", "s", name)


def write_tone(path, seconds, freq, channels, rate=44100, peak=3000):
    w = wave.open(path, "w"); w.setnchannels(channels); w.setsampwidth(2); w.setframerate(rate)
    frames = []
    for i in range(int(rate * seconds)):
        v = struct.pack("<h", int(peak * math.sin(2 * math.pi * freq * i / rate)))
        frames.append(v * channels)
    w.writeframes(b"".join(frames)); w.close()


class Daemon:
    def __init__(self, o, base, sink, files):
        self.home = tempfile.mkdtemp(prefix="eq-", dir=base)
        self.bus, address = start_bus()
        self.env = env_for(self.home, address)
        self.p = subprocess.Popen([os.path.abspath(o.tonearmd), "--audio-sink", sink] + files, env=self.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_playing(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if busctl(self.env, "get-property", BUS, PATH, "org.mpris.MediaPlayer2.Player", "PlaybackStatus") == 's "Playing"':
                return True
            time.sleep(0.02)
        return False

    def stop(self):
        self.p.send_signal(signal.SIGTERM); self.p.wait(timeout=60)
        os.killpg(self.bus.pid, signal.SIGTERM); self.bus.wait()


def cpu(o, base):
    music = os.path.join(base, "long.wav")
    write_tone(music, o.cpu_seconds * 2 * o.runs + 30, 440, 2)
    out = {"off": [], "loudness": []}
    d = Daemon(o, base, "fakesink sync=true", [music])
    try:
        d.wait_playing()
        time.sleep(2)  # the start, not measured
        for _ in range(o.runs):
            for mode in ("off", "loudness"):
                set_eq(d.env, mode)
                time.sleep(0.5)  # the ramp and the chain going in or out
                c0, t0 = cpu_of(d.p.pid), time.time()
                time.sleep(o.cpu_seconds)
                out[mode].append((cpu_of(d.p.pid) - c0) / (time.time() - t0) * 100)
    finally:
        d.stop()
    return out


def levels(path, window):
    w = wave.open(path); n = w.getnframes(); ch = w.getnchannels(); rate = w.getframerate()
    data = struct.unpack(f"<{n * ch}h", w.readframes(n))
    mono = data[::ch]
    out = []
    for start in range(0, len(mono) - window, window):
        s = mono[start:start + window]
        out.append(10 * math.log10(max(1e-9, sum(x * x for x in s) / window)))
    return out, rate


def latency(o, base):
    tone = os.path.join(base, "tone.wav")
    write_tone(tone, 5, 947, 1)
    results = []
    for run in range(o.latency_runs):
        out = os.path.join(base, f"out-{run}.wav")
        d = Daemon(o, base, f"wavenc ! filesink sync=true location={out}", [tone])
        try:
            d.wait_playing()
            while position_us(d.env) < 2_000_000:
                time.sleep(0.01)
            # A cut: clipping prevention would take a boost back off the preamp, leaving the tone's level as it was.
            set_bands(d.env, [0, 0, 0, 0, 0, -12, 0, 0, 0, 0])
            at = position_us(d.env) / 1e6
            while busctl(d.env, "get-property", BUS, PATH, "org.mpris.MediaPlayer2.Player", "PlaybackStatus") != 's "Stopped"':
                time.sleep(0.05)
        finally:
            d.stop()
        window = 441  # 10 ms
        lv, rate = levels(out, window)
        base_level = statistics.median(lv[20:150])
        first = next((i for i in range(150, len(lv)) if lv[i] < base_level - 0.5), None)
        full = next((i for i in range(150, len(lv)) if lv[i] < base_level - 11.5), None)
        results.append((at, first * window / rate if first is not None else None, full * window / rate if full is not None else None))
    return results


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--tonearmd", default=os.path.join(os.path.dirname(__file__), "../.build/release/tonearmd"))
    a.add_argument("--runs", type=int, default=3)
    a.add_argument("--cpu-seconds", type=float, default=20)
    a.add_argument("--latency-runs", type=int, default=5)
    o = a.parse_args()
    base = tempfile.mkdtemp(prefix="eq-bench-")
    c = cpu(o, base)
    print(f"tonearmd CPU while playing 44.1 kHz stereo in real time (% of one CPU, median of {o.runs} × {o.cpu_seconds:g} s)\n")
    print("| equalizer | CPU % |\n| --- | ---: |")
    for mode in ("off", "loudness"):
        print(f"| {mode} | {statistics.median(c[mode]):.2f} |")
    r = latency(o, base)
    lat = [f - at for at, f, _ in r if f is not None]
    ramp = [full - f for _, f, full in r if f is not None and full is not None]
    print(f"\nEqualizer change (D-Bus Set EqualizerBands) to the output, real time, {len(lat)} of {len(r)} runs measured (ms)\n")
    print("| metric | median | min | max |\n| --- | ---: | ---: | ---: |")
    if lat:
        ms = [x * 1000 for x in lat]
        print(f"| call returned → first changed 10 ms of output | {statistics.median(ms):.0f} | {min(ms):.0f} | {max(ms):.0f} |")
    if ramp:
        ms = [x * 1000 for x in ramp]
        print(f"| first change → full -12 dB (the ramp) | {statistics.median(ms):.0f} | {min(ms):.0f} | {max(ms):.0f} |")


if __name__ == "__main__":
    main()
