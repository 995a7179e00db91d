#!/usr/bin/env python3
"""Drives the web face's page in Debian's headless Chromium and checks one scenario against a running tonearmd.

    python page_check.py --url http://127.0.0.1:PORT/ SCENARIO [--screenshot DIR] [scenario options]

DBUS_SESSION_BUS_ADDRESS must name the bus the daemon is on: the player is also watched and driven over MPRIS
(playerctl, busctl, dbus-monitor), so that each check sees the page and the daemon agree. Prints `ok: ...` and exits
0, or prints why not and exits 1. Every wait is for a condition, never a fixed time.
"""
import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

TIMEOUT = 30
POLL = 0.05
PLAYER = ['playerctl', '-p', 'tonearm']
# Answers the API documents as "there is none": the browser logs any 4xx as an error, the page cannot stop it.
EXPECTED_MISSES = ('/api/v1/lyrics', '/api/v1/waveform/')


class Failed(Exception):
    pass


def start_browser(width, height):
    options = Options()
    # Both paths given, so Selenium Manager has nothing to look up or download.
    options.binary_location = '/usr/bin/chromium'
    profile = tempfile.mkdtemp(prefix='tonearm-chromium-')
    for arg in ('--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                f'--user-data-dir={profile}', f'--window-size={width},{height}'):
        options.add_argument(arg)
    options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    try:
        driver = webdriver.Chrome(options=options, service=Service(executable_path='/usr/bin/chromedriver'))
    except Exception:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    return driver, profile


def wait(driver, what, condition):
    """Waits for condition() to be truthy; `what` may be a function, to describe what was seen at the end."""
    try:
        # The page rebuilds lists as they change: an element gone stale is looked for again at the next poll.
        return WebDriverWait(driver, TIMEOUT, poll_frequency=POLL,
                             ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: condition())
    except TimeoutException:
        raise Failed(f'timed out after {TIMEOUT} s waiting for {what() if callable(what) else what}') from None


def poll(what, condition):
    deadline = time.monotonic() + TIMEOUT
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failed(f'timed out after {TIMEOUT} s waiting for {what}')
        time.sleep(POLL)


def run(*command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    return done.stdout.strip() if done.returncode == 0 else None


def name_of(element):
    """The accessible name as the browser computes it, as a screen reader would read it."""
    try:
        return element.accessible_name
    except WebDriverException:
        return element.get_attribute('aria-label') or element.text


def by_id(driver, id):
    return driver.find_element(By.ID, id)


def set_viewport(driver, width, height):
    """Resizes the window so the page itself is width × height, whatever the window's frame takes."""
    driver.set_window_size(width, height)
    inner = driver.execute_script('return [window.innerWidth, window.innerHeight]')
    if inner != [width, height]:
        size = driver.get_window_size()
        driver.set_window_size(size['width'] + width - inner[0], size['height'] + height - inner[1])
    wait(driver, f'a {width} px wide viewport', lambda: driver.execute_script('return window.innerWidth') == width)


def open_page(driver, url):
    """Loads the page and waits until its WebSocket is open and the first state is shown."""
    driver.get(url)
    connection = by_id(driver, 'connection')
    wait(driver, 'the page to connect (#connection data-state="open")',
         lambda: connection.get_attribute('data-state') == 'open')
    wait(driver, 'the title to be shown', lambda: by_id(driver, 'title').text.strip() != '')
    # A mark that a reload would wipe out, so a check can tell the page followed the player by itself.
    driver.execute_script('window.pageCheckMark = 1')


def still_same_page(driver):
    if driver.execute_script('return window.pageCheckMark') != 1:
        raise Failed('the page was reloaded')


def button_named(driver, element, name):
    wait(driver, lambda: f'the button to be named {name!r} (it is {name_of(element)!r})', lambda: name_of(element) == name)


def mpris_tracks():
    out = run('busctl', '--user', 'get-property', 'org.mpris.MediaPlayer2.tonearm', '/org/mpris/MediaPlayer2',
              'org.mpris.MediaPlayer2.TrackList', 'Tracks')
    return [int(n) for n in re.findall(r'/org/tonearm/[Tt]rack/(\d+)', out or '')]


def queue_ids(driver):
    # Read in one go: the list is rebuilt at every change, which leaves element references stale.
    return driver.execute_script("return [...document.querySelectorAll('#queue > li')].map(li => Number(li.dataset.id))")


# ---- Scenarios ----

def shows_track(driver, args):
    if not args.expect_title:
        raise Failed('shows-track needs --expect-title')
    title = by_id(driver, 'title')
    wait(driver, lambda: f'the title {args.expect_title!r} (shown: {title.text!r})', lambda: title.text == args.expect_title)
    return f'the page shows {args.expect_title!r}'


def play_click(driver, args):
    button = by_id(driver, 'playpause')
    button_named(driver, button, 'Play')
    button.click()
    poll('playerctl to say Playing', lambda: run(*PLAYER, 'status') == 'Playing')
    button_named(driver, button, 'Pause')
    return 'clicking Play started the player, and the button became Pause'


def follows_pause(driver, args):
    button = by_id(driver, 'playpause')
    button_named(driver, button, 'Pause')
    if run(*PLAYER, 'pause') is None:
        raise Failed('playerctl pause failed')
    button_named(driver, button, 'Play')
    still_same_page(driver)
    return 'a pause over MPRIS turned the button into Play without a reload'


def seek_drag(driver, args):
    slider = by_id(driver, 'position')
    wait(driver, 'the position slider to know the length', lambda: int(slider.get_attribute('aria-valuemax') or 0) > 0)
    length = int(poll('the track length over MPRIS', lambda: run(*PLAYER, 'metadata', 'mpris:length'))) / 1e6
    monitor = subprocess.Popen(
        ['dbus-monitor', '--session', "type='signal',interface='org.mpris.MediaPlayer2.Player',member='Seeked'"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    listening, seeked = threading.Event(), threading.Event()

    def read():
        for line in monitor.stdout:
            # The monitor's first message (its own name from the bus) shows it is in place.
            listening.set()
            if 'member=Seeked' in line:
                seeked.set()
        listening.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not listening.wait(TIMEOUT) or monitor.poll() is not None:
            raise Failed('dbus-monitor did not start')
        width = slider.rect['width']
        # click_and_hold takes the middle; the move takes it on to three quarters.
        ActionChains(driver).click_and_hold(slider).move_by_offset(int(width * 0.25), 0).release().perform()
        if not seeked.wait(TIMEOUT):
            raise Failed(f'no Seeked signal within {TIMEOUT} s of the drag')
    finally:
        monitor.terminate()
        monitor.wait()
    position = float(poll('a position over MPRIS', lambda: run(*PLAYER, 'position')))
    if position <= length / 2:
        raise Failed(f'the drag to 75 % left the player at {position:.1f} s of {length:.1f} s')
    return f'dragging the waveform seeked to {position:.1f} s of {length:.1f} s'


def reorder(driver, args):
    tracks = poll('MPRIS TrackList Tracks', mpris_tracks)
    if len(tracks) < 3:
        raise Failed(f'the queue needs 3 entries or more, MPRIS lists {tracks}')
    wait(driver, lambda: f'the page to list the queue {tracks} (it lists {queue_ids(driver)})',
         lambda: queue_ids(driver) == tracks)
    last = tracks[-1]
    item = lambda: driver.find_element(By.CSS_SELECTOR, f'#queue > li[data-id="{last}"]')
    if args.by == 'drag':
        first = driver.find_element(By.CSS_SELECTOR, '#queue > li')
        grip = item().find_element(By.CSS_SELECTOR, '.grip')
        # Into the top half of the first entry: dropped before it.
        ActionChains(driver).click_and_hold(grip) \
            .move_to_element_with_offset(first, 0, -int(first.rect['height'] / 4)).release().perform()
    else:
        up = item().find_element(By.CSS_SELECTOR, 'button[data-act="up"]')
        if not name_of(up).startswith('Move up'):
            raise Failed(f'the move-up button is named {name_of(up)!r}')
        driver.execute_script('arguments[0].focus()', up)
        # Enter on whatever has the focus: the page keeps it on the same button as the list is rebuilt.
        while (index := queue_ids(driver).index(last)) > 0:
            ActionChains(driver).send_keys(Keys.ENTER).perform()
            wait(driver, f'entry {last} to move up from place {index}', lambda: queue_ids(driver).index(last) < index)
    order = poll(f'MPRIS to list entry {last} first', lambda: (t := mpris_tracks()) and t[0] == last and t)
    return f'moved entry {last} to the front by {args.by}: MPRIS lists {order}'


def accept_offer(driver, args):
    if not args.received_dir or not args.file:
        raise Failed('accept-offer needs --received-dir and --file')
    offers = by_id(driver, 'offers')

    def accept_button():
        for button in offers.find_elements(By.TAG_NAME, 'button'):
            if button.is_displayed() and name_of(button) == 'Accept':
                return button
        return None

    wait(driver, 'an Accept button in #offers', accept_button).click()
    path = os.path.join(args.received_dir, args.file)
    poll(f'{path} to arrive', lambda: os.path.isfile(path))
    return f'accepting the offer received {path}'


def save_page(driver, path):
    """A screenshot of the whole page, not only what fits in the window."""
    try:
        size = driver.execute_script(
            'return [Math.max(window.innerWidth, document.documentElement.scrollWidth), document.documentElement.scrollHeight]')
        shot = driver.execute_cdp_cmd('Page.captureScreenshot', {
            'format': 'png', 'captureBeyondViewport': True,
            'clip': {'x': 0, 'y': 0, 'width': size[0], 'height': size[1], 'scale': 1}})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(shot['data']))
    except WebDriverException:
        driver.save_screenshot(path)


def narrow(driver, args):
    if not args.screenshot:
        raise Failed('narrow needs --screenshot DIR')
    set_viewport(driver, 360, 800)
    # Everything the page fills in later (queue, waveform) is in before the measure.
    wait(driver, 'the queue to be shown', lambda: driver.execute_script(
        "return document.querySelectorAll('#queue > li').length > 0 || !document.getElementById('queue-empty').hidden"))
    sizes = driver.execute_script('return [document.documentElement.scrollWidth, window.innerWidth]')
    if sizes[0] > sizes[1]:
        wide = driver.execute_script("""
            return [...document.querySelectorAll('body *')]
              .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
              .slice(0, 5).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className)""")
        save_page(driver, os.path.join(args.screenshot, 'web-phone.png'))
        raise Failed(f'the page scrolls sideways at 360 px: {sizes[0]} px wide; too wide: {wide}')
    save_page(driver, os.path.join(args.screenshot, 'web-phone.png'))
    set_viewport(driver, 1280, 800)
    save_page(driver, os.path.join(args.screenshot, 'web-desktop.png'))
    return f'no sideways scroll at 360 px; screenshots in {args.screenshot}'


def console_clean(driver, args):
    button = by_id(driver, 'playpause')
    for _ in range(2):
        before = name_of(button)
        after = {'Play': 'Pause', 'Pause': 'Play'}.get(before)
        if after is None:
            raise Failed(f'the play/pause button is named {before!r}')
        button.click()
        button_named(driver, button, after)
    errors, notes = [], []
    for entry in driver.get_log('browser'):
        if entry.get('level') != 'SEVERE':
            continue
        message = entry.get('message', '')
        if entry.get('source') == 'network' and any(path in message for path in EXPECTED_MISSES):
            notes.append(message)
        else:
            errors.append(message)
    if errors:
        raise Failed('the console shows errors:\n  ' + '\n  '.join(errors))
    extra = f' (expected "none" answers logged: {len(notes)})' if notes else ''
    return f'no console errors after loading and playing/pausing twice{extra}'


CROSSFADE = ['busctl', '--user', 'org.mpris.MediaPlayer2.tonearm', '/org/mpris/MediaPlayer2', 'org.tonearm.Player1', 'Crossfade']


def crossfade_pick(driver, args):
    picker = by_id(driver, 'crossfade')
    if name_of(picker) != 'Crossfade':
        raise Failed(f'the crossfade picker is named {name_of(picker)!r}')
    Select(picker).select_by_value('6')
    poll('the daemon to say Crossfade 6', lambda: run(*CROSSFADE[:2], 'get-property', *CROSSFADE[2:]) == 'd 6')
    if run(*CROSSFADE[:2], 'set-property', *CROSSFADE[2:], 'd', '3') is None:
        raise Failed('busctl could not set Crossfade')
    wait(driver, 'the picker to follow the bus to 3 s', lambda: picker.get_attribute('value') == '3')
    still_same_page(driver)
    return 'picking 6 s in the page set the daemon\'s crossfade, and a change over the bus showed in the page'


SCENARIOS = {
    'shows-track': shows_track, 'play-click': play_click, 'follows-pause': follows_pause, 'seek-drag': seek_drag,
    'reorder': reorder, 'accept-offer': accept_offer, 'narrow': narrow, 'console-clean': console_clean,
    'crossfade-pick': crossfade_pick,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('scenario', choices=sorted(SCENARIOS))
    parser.add_argument('--url', required=True)
    parser.add_argument('--screenshot', metavar='DIR', help='where screenshots go (and one of the page on failure)')
    parser.add_argument('--expect-title')
    parser.add_argument('--received-dir')
    parser.add_argument('--file')
    parser.add_argument('--by', choices=['drag', 'keys'], default='drag', help='how reorder moves the entry')
    parser.add_argument('--wait-ready', action='store_true',
                        help='(always done) first wait until the page has connected and shows the state')
    args = parser.parse_args()
    if args.screenshot:
        os.makedirs(args.screenshot, exist_ok=True)

    driver = profile = None
    try:
        driver, profile = start_browser(1280, 800)
        open_page(driver, args.url)
        print('ok:', SCENARIOS[args.scenario](driver, args))
        return 0
    except Exception as error:
        print(f'{args.scenario}: {error}' if isinstance(error, Failed) else f'{args.scenario}: {error!r}')
        if driver and args.screenshot:
            try:
                save_page(driver, os.path.join(args.screenshot, f'web-failed-{args.scenario}.png'))
            except WebDriverException:
                pass
        return 1
    finally:
        if driver:
            driver.quit()
        if profile:
            shutil.rmtree(profile, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
