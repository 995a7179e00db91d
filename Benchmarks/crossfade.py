#!/usr/bin/env python3
"""CPU while crossfading and with the equalizer on: tonearmd beside mpd's crossfade, the same files in one run.

Six 12-second stereo Ogg Vorbis tracks (44.1 kHz, a different tone each, no album tags, so every join fades) play in a loop
to a real-time null output (tonearmd: `fakesink sync=true`; mpd: its `null` output, which keeps time), first with
crossfade off, then with a 5-second crossfade (almost half of the time is spent inside a fade), then tonearmd with
that crossfade and the equalizer on (the `loudness` preset: every band moving; mpd has no equalizer). CPU is the process's
user + system time per minute over --seconds after a warm-up. Prints a Markdown table with tonearm / mpd. Never fails
on a time.

  Benchmarks/crossfade.py [--tonearmd PATH] [--seconds 60] [--fade 5]
"""
import argparse, os, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import command, connect, cpu_of, env_for, free_port, sine, start_bus  # noqa: E402

TRACKS = 6
TRACK_SECONDS = 12


def make_music(folder):
    """Ogg Vorbis, the commonest free format (WAV would measure TagLib scanning whole files for tags instead)."""
    os.makedirs(folder)
    files = []
    for i in range(TRACKS):
        wav = os.path.join(folder, f"{i}.wav")
        sine(wav, TRACK_SECONDS, 330 + 55 * i)
        files.append(os.path.join(folder, f"{i}.ogg"))
        subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={wav}", "!", "wavparse", "!", "audioconvert", "!",
                        "vorbisenc", "!", "oggmux", "!", "filesink", f"location={files[-1]}"], check=True)
        os.remove(wav)
    return files


def tonearm_cpu(o, base, files, fade, equalizer=None):
    home = tempfile.mkdtemp(prefix="xfade-tonearm-", dir=base)
    bus, address = start_bus()
    env = env_for(home, address)
    cfg = os.path.join(home, "config/tonearm"); os.makedirs(cfg)
    eq = f'[playback.equalizer]\npreset = "{equalizer}"\n' if equalizer else ""
    open(os.path.join(cfg, "config.toml"), "w").write(f"[playback.crossfade]\nseconds = {fade}\n" + eq)
    p = subprocess.Popen([os.path.abspath(o.tonearmd), "--audio-sink", "fakesink sync=true"] + files, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        subprocess.run(["busctl", "--user", "set-property", "org.mpris.MediaPlayer2.tonearm", "/org/mpris/MediaPlayer2",
                        "org.mpris.MediaPlayer2.Player", "LoopStatus", "s", "Playlist"], env=env, capture_output=True)
        c0, t0 = cpu_of(p.pid), time.time()
        time.sleep(o.seconds)
        return (cpu_of(p.pid) - c0) / (time.time() - t0) * 60
    finally:
        p.send_signal(signal.SIGTERM); p.wait(timeout=60)
        os.killpg(bus.pid, signal.SIGTERM); bus.wait()


def mpd_cpu(o, base, music, fade):
    if not shutil.which("mpd"):
        return None
    mdir = tempfile.mkdtemp(prefix="xfade-mpd-", dir=base)
    port = free_port()
    conf = os.path.join(mdir, "mpd.conf")
    open(conf, "w").write(f'music_directory "{music}"\ndb_file "{mdir}/db"\nstate_file "{mdir}/state"\n'
                          f'bind_to_address "127.0.0.1"\nport "{port}"\naudio_output {{\n type "null"\n name "null"\n}}\n')
    p = subprocess.Popen(["mpd", "--no-daemon", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        s, f = connect(port)
        command(f, "update")
        deadline = time.time() + 60
        while any(l.startswith(b"updating_db") for l in command(f, "status")[0]) and time.time() < deadline:
            time.sleep(0.1)
        for line in ["clear", "add /", "repeat 1", f"crossfade {fade}", "play"]:
            _, end = command(f, line)
            if end.startswith(b"ACK"):
                return f"mpd refused {line}: {end.decode().strip()}"
        time.sleep(3)
        c0, t0 = cpu_of(p.pid), time.time()
        time.sleep(o.seconds)
        return (cpu_of(p.pid) - c0) / (time.time() - t0) * 60
    finally:
        os.killpg(p.pid, signal.SIGTERM); p.wait(timeout=60)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--tonearmd", default=os.path.join(os.path.dirname(__file__), "../.build/release/tonearmd"))
    a.add_argument("--seconds", type=float, default=60)
    a.add_argument("--fade", type=int, default=5)
    o = a.parse_args()
    base = tempfile.mkdtemp(prefix="xfade-bench-")
    try:
        music = os.path.join(base, "Music")
        files = make_music(music)
        rows = []
        for fade in (0, o.fade):
            t = tonearm_cpu(o, base, files, fade)
            m = mpd_cpu(o, base, music, fade)
            rows.append((f"{fade} s" if fade else "off", t, m))
        rows.append((f"{o.fade} s + equalizer (loudness)", tonearm_cpu(o, base, files, o.fade, "loudness"), "no equalizer"))
        print(f"CPU while playing {TRACKS} × {TRACK_SECONDS} s tracks in a loop to a real-time null output "
              f"(CPU s per minute over {o.seconds:.0f} s; lower is better)\n")
        print("| crossfade | tonearm | mpd | tonearm ÷ mpd |")
        print("| --- | --- | --- | --- |")
        for label, t, m in rows:
            if m is None:
                peer, ratio = "not installed", "—"
            elif isinstance(m, str):
                peer, ratio = m, "—"
            else:
                peer, ratio = f"{m:.3f}", f"{t / m:.2f}" if m > 0 else "—"
            print(f"| {label} | {t:.3f} | {peer} | {ratio} |")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
