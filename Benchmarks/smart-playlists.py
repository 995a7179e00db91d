#!/usr/bin/env python3
"""Smart playlists over a generated library of 50,000 tracks, beside the same queries in mpd (`find`/`search` with
filters), both asked over the MPD protocol on loopback; and whether writing the listening history costs playback CPU.

The library is written straight into each player's database (no audio files): tonearmd's SQLite index (after a first
start made its schema) with a listening history for half the tracks, and an mpd text database loaded at start with
`auto_update no`. Each query is timed from the request to the last line of the answer, median of --runs; the tables
give the ratio tonearm / mpd. Never fails on a time.

  Benchmarks/smart-playlists.py [--tonearmd PATH] [--tracks 50000] [--runs 7] [--cpu-seconds 60] [--skip-cpu]
"""
import argparse, math, os, random, shutil, signal, socket, sqlite3, statistics, struct, subprocess, sys, tempfile, time, wave

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import command, connect, cpu_of, env_for, free_port, start_bus  # noqa: E402

GENRES = ["Jazz", "Rock", "Electronic", "Soul", "Ambient", "Pop", "Folk", "Classical"]
ARTISTS = [f"Artist {i}" for i in range(400)] + ["Miles Davis", "Davis Trio", "The Beatles", "Nina Simone"]

# (name, rules file, mpd command or None, what it asks)
QUERIES = [
    ("genre", "genre is Jazz\n", 'find "(Genre == \\"Jazz\\")"', "one genre (about 1 in 8)"),
    ("genre+artist", "genre is jazz\nartist contains davis\n", 'search "((Genre == \\"jazz\\") AND (Artist contains \\"davis\\"))"',
     "a genre and a word in the artist, case-insensitive"),
    ("decade", "year gt 1989\nyear lt 2000\n", 'find "(Date =~ \\"^199\\")"', "the 1990s"),
    ("loved-not-lately", "rating gt 3\nlastPlayed notInTheLast 30 days\nsort rating desc, playCount desc\nlimit 100\n", None,
     "rated over 3 stars, not heard for 30 days, best first, 100 (history: mpd has no last-played)"),
    ("random-50", "sort random\nlimit 50\n", None, "50 at random from the whole library"),
]


def timed(f, line, runs):
    times, count = [], 0
    command(f, line)  # warm
    for _ in range(runs):
        t = time.perf_counter()
        lines, end = command(f, line)
        times.append(time.perf_counter() - t)
        if end.startswith(b"ACK"):
            raise RuntimeError(f"{line}: {end.decode().strip()}")
        count = sum(1 for l in lines if l.startswith(b"file: "))
    return statistics.median(times) * 1e3, count


def library(n, seed=1):
    rng = random.Random(seed)
    now = time.time()
    for i in range(n):
        artist = rng.choice(ARTISTS)
        played = rng.random() < 0.5
        first = now - rng.uniform(0, 400 * 86400) if played else None
        yield dict(i=i, artist=artist, album=f"{artist} Album {i % 7}", title=f"Song {i}", genre=rng.choice(GENRES),
                   year=rng.randint(1955, 2026), track=i % 14 + 1, duration=float(rng.randint(60, 600)),
                   rating=rng.randint(0, 10) if rng.random() < 0.4 else None, plays=rng.randint(1, 40) if played else 0,
                   first=first, last=min(now, first + rng.uniform(0, 200 * 86400)) if first else None,
                   added=now - rng.uniform(0, 3 * 365 * 86400))


def tonearm_queries(o, home, music):
    bus, address = start_bus()
    env = env_for(home, address)
    port = free_port()
    cfg = os.path.join(home, "config/tonearm"); os.makedirs(cfg, exist_ok=True)
    # No scan at start: the rows written below have no files behind them, and a scan would remove them.
    open(os.path.join(cfg, "config.toml"), "w").write(
        f'[plugins.library]\nfolders = ["{music}"]\nscan-on-start = false\nmeasure-loudness = false\n'
        f'[mpd-protocol]\nenabled = true\nport = {port}\n')
    cmd = [os.path.abspath(o.tonearmd), "--audio-sink", "fakesink sync=true"]
    # A first start makes the index's schema.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    connect(port); p.send_signal(signal.SIGTERM); p.wait(timeout=60)
    db = sqlite3.connect(os.path.join(home, "data/tonearm/library.sqlite"))
    rows, history = [], []
    for t in library(o.tracks):
        path = f"{music}/{t['artist']}/{t['album']}/{t['i']}.flac"
        uri = "file://" + path.replace(" ", "%20")
        rows.append((uri, path, 1000, 1, "", t["title"], t["artist"], t["album"], t["artist"], t["genre"], t["year"], t["track"], 1,
                     t["duration"], None, t["title"].lower(), t["artist"].lower(), t["album"].lower(), t["artist"].lower(),
                     t["genre"].lower(), path.lower(), 1, 3, t["added"]))
        if t["plays"] or t["rating"] is not None:
            history.append(("c:" + uri, uri, t["plays"], 0, t["first"], t["last"], t["rating"]))
    db.executemany("""INSERT INTO tracks (uri, path, size, mtime, art_signature, title, artist, album, album_artist, genre, year,
                      track_number, disc_number, duration, art_url, title_key, artist_key, album_key, album_artist_key, genre_key,
                      path_key, generation, loudness_state, added) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""", rows)
    db.executemany("INSERT INTO history (key, uri, play_count, skip_count, first_played, last_played, rating) VALUES (?,?,?,?,?,?,?)", history)
    db.commit(); db.close()
    folder = os.path.join(home, "data/tonearm/playlists"); os.makedirs(folder, exist_ok=True)
    for name, rules, _, _ in QUERIES:
        open(os.path.join(folder, name + ".smart"), "w").write(rules)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        s, f = connect(port)
        for _ in range(600):
            if any(l.startswith(b"songs: " + str(o.tracks).encode()) for l in command(f, "stats")[0]): break
            time.sleep(0.1)
        out = {}
        for name, _, _, _ in QUERIES:
            out[name] = {"listplaylist": timed(f, f'listplaylist "{name}"', o.runs),
                         "listplaylistinfo": timed(f, f'listplaylistinfo "{name}"', o.runs)}
        return out
    finally:
        p.send_signal(signal.SIGTERM); p.wait(timeout=120)
        os.killpg(bus.pid, signal.SIGTERM); bus.wait()


MPD_TAGS = ["Artist", "Album", "AlbumArtist", "Title", "Track", "Genre", "Date", "Disc"]


def mpd_queries(o, home, music):
    if not shutil.which("mpd"):
        return None
    mdir = os.path.join(home, "mpd"); os.makedirs(mdir)
    version = subprocess.run(["mpd", "--version"], capture_output=True, text=True).stdout.split()[3]
    with open(os.path.join(mdir, "db"), "w") as db:
        db.write(f"info_begin\nformat: 2\nmpd_version: {version}\nfs_charset: UTF-8\n")
        db.writelines(f"tag: {t}\n" for t in MPD_TAGS)
        db.write("info_end\ndirectory: m\nmtime: 0\nbegin: m\n")
        for t in library(o.tracks):
            db.write(f"song_begin: {t['i']}.flac\nTime: {t['duration']:.3f}\nArtist: {t['artist']}\nAlbum: {t['album']}\n"
                     f"AlbumArtist: {t['artist']}\nTitle: {t['title']}\nTrack: {t['track']}\nGenre: {t['genre']}\n"
                     f"Date: {t['year']}\nDisc: 1\nmtime: 1\nsong_end\n")
        db.write("end: m\n")
    port = free_port()
    conf = os.path.join(mdir, "mpd.conf")
    open(conf, "w").write(f'music_directory "{music}"\ndb_file "{mdir}/db"\nstate_file "{mdir}/state"\nauto_update "no"\n'
                          f'metadata_to_use "{",".join(t.lower() for t in MPD_TAGS)}"\n'
                          f'bind_to_address "127.0.0.1"\nport "{port}"\naudio_output {{\n type "null"\n name "null"\n}}\n')
    p = subprocess.Popen(["mpd", "--no-daemon", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        s, f = connect(port)
        songs = [l for l in command(f, "stats")[0] if l.startswith(b"songs:")]
        if songs != [f"songs: {o.tracks}\n".encode()]:
            return {"error": f"mpd did not load the generated database ({songs})"}
        return {name: timed(f, q, o.runs) for name, _, q, _ in QUERIES if q}
    finally:
        os.killpg(p.pid, signal.SIGTERM); p.wait(timeout=120)


def sine(path, seconds, freq):
    w = wave.open(path, "w"); w.setnchannels(1); w.setsampwidth(2); w.setframerate(11025)
    w.writeframes(b"".join(struct.pack("<h", int(3000 * math.sin(i * freq))) for i in range(int(11025 * seconds)))); w.close()


def history_cpu(o, base):
    """tonearmd's CPU seconds per minute of playback of 4 s tracks (each one a listen) with history on and off."""
    music = os.path.join(base, "cpu-music"); os.makedirs(music)
    files = []
    for i in range(12):
        files.append(os.path.join(music, f"{i}.wav")); sine(files[-1], 4, 0.05 + 0.01 * i)
    out = {}
    for attempt in range(o.cpu_runs):
        for history in ("true", "false"):
            home = tempfile.mkdtemp(prefix="smart-cpu-", dir=base)
            bus, address = start_bus()
            env = env_for(home, address)
            cfg = os.path.join(home, "config/tonearm"); os.makedirs(cfg)
            open(os.path.join(cfg, "config.toml"), "w").write(
                f'[plugins.library]\nfolders = ["{music}"]\nhistory = {history}\nmeasure-loudness = false\n')
            p = subprocess.Popen([os.path.abspath(o.tonearmd), "--audio-sink", "fakesink sync=true"] + files, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                time.sleep(3)  # the start and the scan of twelve files, not measured
                subprocess.run(["busctl", "--user", "set-property", "org.mpris.MediaPlayer2.tonearm", "/org/mpris/MediaPlayer2",
                                "org.mpris.MediaPlayer2.Player", "LoopStatus", "s", "Playlist"], env=env, capture_output=True)
                c0, t0 = cpu_of(p.pid), time.time()
                time.sleep(o.cpu_seconds)
                cpu = (cpu_of(p.pid) - c0) / (time.time() - t0) * 60
                listens = 0
                db = os.path.join(home, "data/tonearm/library.sqlite")
                if os.path.exists(db):
                    listens = sqlite3.connect(db).execute("SELECT COUNT(*) FROM listens").fetchone()[0]
                out.setdefault(history, []).append((cpu, listens))
            finally:
                p.send_signal(signal.SIGTERM); p.wait(timeout=60)
                os.killpg(bus.pid, signal.SIGTERM); bus.wait()
    return out


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--tonearmd", default=os.path.join(os.path.dirname(__file__), "../.build/release/tonearmd"))
    a.add_argument("--tracks", type=int, default=50000)
    a.add_argument("--runs", type=int, default=7)
    a.add_argument("--cpu-seconds", type=float, default=60)
    a.add_argument("--cpu-runs", type=int, default=2)
    a.add_argument("--skip-cpu", action="store_true")
    o = a.parse_args()
    base = tempfile.mkdtemp(prefix="smart-bench-")
    try:
        home = os.path.join(base, "tonearm"); music = os.path.join(base, "Music"); os.makedirs(music)
        t = tonearm_queries(o, home, music)
        m = mpd_queries(o, base, music)
        print(f"Smart playlists over {o.tracks:,} tracks, asked over the MPD protocol (ms, median of {o.runs}; lower is better)\n")
        print("| query | tracks | tonearm listplaylist | tonearm listplaylistinfo | mpd find/search | tonearm (info) ÷ mpd |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, _, q, what in QUERIES:
            (lp, n), (li, _) = t[name]["listplaylist"], t[name]["listplaylistinfo"]
            if m is None:
                peer, ratio = "not installed", "—"
            elif "error" in m:
                peer, ratio = m["error"], "—"
            elif q is None:
                peer, ratio = "no equivalent", "—"
            else:
                mt, mn = m[name]
                peer, ratio = f"{mt:.1f} ({mn} tracks)", f"{li / mt:.2f}"
            print(f"| {name}: {what} | {n} | {lp:.1f} | {li:.1f} | {peer} | {ratio} |")
        if not o.skip_cpu:
            c = history_cpu(o, base)
            print(f"\ntonearmd CPU while playing 4 s tracks in a loop ({o.cpu_seconds:.0f} s windows, {o.cpu_runs} each, CPU s per minute)\n")
            print("| history | CPU s/min (each window) | listens written |")
            print("| --- | --- | --- |")
            for h in ("true", "false"):
                runs = c[h]
                print(f"| {'on' if h == 'true' else 'off'} | " + ", ".join(f"{x:.3f}" for x, _ in runs) + " | "
                      + ", ".join(str(n) for _, n in runs) + " |")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
