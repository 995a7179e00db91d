#!/usr/bin/env python3
"""A UPnP AV control point for the tests and benchmarks, on async-upnp-client (pinned in scripts/upnp-venv; run it
with that venv's python). Prints one JSON object per line on stdout, flushed; errors as {"error": CODE or null,
"description": TEXT} (exit 3 for a UPnP SOAP fault, 2 for anything else).

  discover [--st ST] [--timeout S] [--mx N] [--repeat S] [--first]
      {"devices": [{location, udn, friendlyName, deviceType, services: [serviceType…]}], "first_seconds": S|null,
       "searches": N}
  describe LOCATION
      {"device": {...as above...}, "actions": {"AVTransport": {"Play": {"in": [...], "out": [...]}}, ...}}
  call LOCATION SERVICE ACTION [ARG=VALUE ...]       SERVICE: AVTransport, RenderingControl, ConnectionManager, …
      {"result": {OUT_ARG: value, …}}    (InstanceID=0, Channel=Master and Speed=1 unless given)
  subscribe LOCATION SERVICE [--seconds S] [--timeout T]
      {"subscribed": SID, "timeout": N}, then per event {"event": SERVICE, "sid", "seq", "vars": {…},
      "LastChange": {VAR: value} (when the event has one; VAR@CHANNEL for a channel other than Master)}
  browse LOCATION [--min-items N] [--timeout S]
      {"items": [{title, url, duration, protocolInfo, didl, id}]}
  session LOCATION
      reads JSON lines on stdin: {"id": X, "cmd": "call", "service", "action", "args": {…}} |
      {"id": X, "cmd": "subscribe"|"unsubscribe", "service"} | {"cmd": "quit"}; answers each with its "id" and the
      same shapes as above; events come as they arrive. EOF or quit unsubscribes and exits.
"""
import argparse, asyncio, json, signal, sys, time
from datetime import timedelta

from async_upnp_client.aiohttp import AiohttpNotifyServer, AiohttpRequester
from async_upnp_client.client_factory import UpnpFactory
from async_upnp_client.exceptions import UpnpActionError, UpnpError
from async_upnp_client.search import SsdpSearchListener
from defusedxml import ElementTree as ET

RENDERER = "urn:schemas-upnp-org:device:MediaRenderer:1"
DIDL = "urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/"
NS = {"d": DIDL, "dc": "http://purl.org/dc/elements/1.1/", "upnp": "urn:schemas-upnp-org:metadata-1-0/upnp/"}
HTTP_TIMEOUT = 30   # a guard for a renderer that hangs, not a figure anything waits out


def emit(obj):
    print(json.dumps(obj, default=str), flush=True)


class Failure(Exception):
    def __init__(self, code, description, status=2):
        super().__init__(description)
        self.code, self.description, self.status = code, description, status


async def device_at(location):
    return await UpnpFactory(AiohttpRequester(HTTP_TIMEOUT)).async_create_device(location)


def summary(device):
    return {"location": device.device_url, "udn": device.udn, "friendlyName": device.friendly_name,
            "deviceType": device.device_type, "services": [s.service_type for s in device.all_services]}


def service_of(device, name):
    """SERVICE as a short name (AVTransport), a full service type or a service id."""
    for s in device.all_services:
        if name in (s.service_type, s.service_id) or s.service_type.split(":")[-2:-1] == [name]:
            return s
    raise Failure(None, f"no service {name} on {device.friendly_name}: {[s.service_type for s in device.all_services]}")


async def call(device, service, action, args):
    s = service_of(device, service)
    if not s.has_action(action):
        raise Failure(401, f"{service} has no action {action}")
    a = s.action(action)
    given = dict(args)
    for arg, default in (("InstanceID", "0"), ("Channel", "Master"), ("Speed", "1")):   # what AV control points send
        if a.argument(arg, "in") and arg not in given:
            given[arg] = default
    # Values come as UPnP strings (the wire form); the library takes Python values and checks them against the SCPD.
    typed = {}
    for k, v in given.items():
        arg = a.argument(k, "in")
        if arg is None:
            raise Failure(402, f"{service}.{action} has no in-argument {k}")
        typed[k] = arg.related_state_variable.coerce_python(str(v)) if isinstance(v, str) else v
    try:
        return await a.async_call(**typed)
    except UpnpActionError as e:
        raise Failure(e.error_code, e.error_desc or str(e), 3) from e


# ---- discovery ----------------------------------------------------------------------------------------------------

async def discover(st, timeout, mx, repeat, first_only):
    """M-SEARCH for ST (again every `repeat` s until something answers, as control points do for a device that is
    still starting); first_seconds counts from the first M-SEARCH to the first answer."""
    found, got_one = {}, asyncio.Event()

    def on_answer(headers):
        if headers.get("st") == st and headers.get("location") and headers["location"] not in found:
            found[headers["location"]] = time.monotonic() - start
            got_one.set()

    listener = SsdpSearchListener(callback=on_answer, search_target=st, timeout=mx)
    await listener.async_start()
    start = time.monotonic()   # read by on_answer, which runs only once a search went out
    searches = 0
    try:
        deadline = start + timeout
        while time.monotonic() < deadline:
            listener.async_search()
            searches += 1
            wait = min(repeat or timeout, deadline - time.monotonic())
            try:
                await asyncio.wait_for(got_one.wait(), max(wait, 0))
                break
            except asyncio.TimeoutError:
                pass
        if found and not first_only:   # others answer within MX seconds of the search
            await asyncio.sleep(max(0, min(mx, deadline - time.monotonic())))
    finally:
        listener.async_stop()
    devices = []
    for location in sorted(found, key=found.get):
        try:
            devices.append(summary(await device_at(location)))
        except UpnpError as e:
            devices.append({"location": location, "error": str(e)})
    return {"devices": devices, "first_seconds": min(found.values()) if found else None, "searches": searches}


# ---- events -------------------------------------------------------------------------------------------------------

def last_change(text):
    """LastChange's <Event><InstanceID val="0"><Var val="…"/>…: {Var: value} (Var@channel off Master)."""
    out = {}
    for instance in ET.fromstring(text):
        for var in instance:
            name = var.tag.split("}")[-1]
            channel = var.get("channel")
            out[name if channel in (None, "Master") else f"{name}@{channel}"] = var.get("val")
    return out


class Events:
    """One callback server on the namespace's 127.0.0.1 for every subscription of this process."""

    def __init__(self, listen):
        self.server = AiohttpNotifyServer(AiohttpRequester(HTTP_TIMEOUT), (listen, 0))
        self.seq = {}
        self.renewals = {}

        def pre_notify(request):
            self.seq[request.headers.get("SID")] = request.headers.get("SEQ")
            return request
        self.server.event_handler.on_pre_notify = pre_notify

    async def start(self):
        await self.server.async_start_server()

    def on_event(self, name):
        def got(service, variables):
            sid = self.server.event_handler.sid_for_service(service)
            seq = self.seq.get(sid)
            event = {"event": name, "sid": sid, "seq": int(seq) if seq and seq.isdigit() else seq,
                     "vars": {v.name: v.upnp_value for v in variables}}
            raw = event["vars"].get("LastChange")
            if raw:
                try:
                    event["LastChange"] = last_change(raw)
                except ET.ParseError as e:
                    event["LastChangeError"] = str(e)
            emit(event)
        return got

    async def subscribe(self, device, name, seconds):
        s = service_of(device, name)
        s.on_event = self.on_event(name)
        sid, timeout = await self.server.event_handler.async_subscribe(s, timedelta(seconds=seconds))
        self.renewals[sid] = asyncio.create_task(self.renew(sid, timeout))
        return {"subscribed": sid, "timeout": int(timeout.total_seconds())}

    async def renew(self, sid, timeout):
        while True:   # halfway through, as the UDA advises
            await asyncio.sleep(timeout.total_seconds() / 2)
            sid, timeout = await self.server.event_handler.async_resubscribe(sid)

    async def unsubscribe(self, device, name):
        sid = self.server.event_handler.sid_for_service(service_of(device, name))
        if sid is None:
            raise Failure(None, f"not subscribed to {name}")
        self.renewals.pop(sid).cancel()
        await self.server.event_handler.async_unsubscribe(sid)
        return {"unsubscribed": sid}

    async def stop(self):
        for task in self.renewals.values():
            task.cancel()
        await self.server.async_stop_server()   # unsubscribes what is left


# ---- ContentDirectory -----------------------------------------------------------------------------------------------

def didl_items(result):
    items = []
    root = ET.fromstring(result)
    for item in root.findall("d:item", NS):
        res = item.find("d:res", NS)
        # didl: the item alone, in a DIDL-Lite root of its own: what SetAVTransportURI takes as CurrentURIMetaData.
        items.append({"id": item.get("id"), "ref": item.get("refID"), "title": item.findtext("dc:title", "", NS),
                      "url": res.text.strip() if res is not None and res.text else None,
                      "duration": res.get("duration") if res is not None else None,
                      "protocolInfo": res.get("protocolInfo") if res is not None else None, "didl": _didl_xml(item)})
    containers = [c.get("id") for c in root.findall("d:container", NS)]
    return items, containers


def _didl_xml(item):
    import xml.etree.ElementTree as std   # serialising only; parsing goes through defusedxml
    for prefix, uri in (("", DIDL), ("dc", NS["dc"]), ("upnp", NS["upnp"]), ("dlna", "urn:schemas-dlna-org:metadata-1-0/")):
        std.register_namespace(prefix, uri)
    root = std.Element(f"{{{DIDL}}}DIDL-Lite")
    root.append(item)
    return std.tostring(root, encoding="unicode")


async def browse(location, min_items, timeout):
    deadline = time.monotonic() + timeout
    while True:   # a server just started may not answer HTTP yet
        try:
            device = await device_at(location)
            break
        except UpnpError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)
    while True:   # a server still scanning answers with what it has so far
        items, pending = [], ["0"]
        while pending:
            result = await call(device, "ContentDirectory", "Browse", {
                "ObjectID": pending.pop(0), "BrowseFlag": "BrowseDirectChildren", "Filter": "*", "StartingIndex": "0",
                "RequestedCount": "0", "SortCriteria": ""})
            found, containers = didl_items(result["Result"])
            items += found
            pending += containers
        # minidlna lists a file under several views (by artist, album, folder…): once each, as the object itself,
        # not a reference to it.
        unique = {}
        for i in sorted(items, key=lambda i: i["ref"] is not None):
            unique.setdefault(i["url"], i)
        unique = [{k: v for k, v in i.items() if k != "ref"} for i in unique.values()]
        if len(unique) >= min_items or time.monotonic() > deadline:
            return {"items": unique}
        await asyncio.sleep(0.2)


# ---- session ------------------------------------------------------------------------------------------------------

async def session(location, listen):
    device = await device_at(location)
    events = Events(listen)
    await events.start()
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                break
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as e:
                emit({"error": None, "description": f"not JSON: {e}"})
                continue
            rid, cmd = request.get("id"), request.get("cmd")
            if cmd == "quit":
                break
            try:
                if cmd == "call":
                    answer = {"result": await call(device, request["service"], request["action"], request.get("args", {}))}
                elif cmd == "subscribe":
                    answer = await events.subscribe(device, request["service"], request.get("timeout", 300))
                elif cmd == "unsubscribe":
                    answer = await events.unsubscribe(device, request["service"])
                else:
                    raise Failure(None, f"unknown cmd {cmd!r}")
            except Failure as e:
                answer = {"error": e.code, "description": e.description}
            except (UpnpError, KeyError) as e:
                answer = {"error": None, "description": f"{type(e).__name__}: {e}"}
            emit(dict(answer, id=rid))
    finally:
        await events.stop()


# ---- command line -------------------------------------------------------------------------------------------------

async def run(o):
    # SIGTERM (how tests end a subscriber) unwinds like Ctrl-C, so the subscription is cancelled at the renderer.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    if o.command == "discover":
        emit(await discover(o.st, o.timeout, o.mx, o.repeat, o.first))
    elif o.command == "describe":
        device = await device_at(o.location)
        actions = {s.service_type.split(":")[-2]: {a.name: {"in": [x.name for x in a.in_arguments()],
                                                           "out": [x.name for x in a.out_arguments()]}
                                                   for a in s.actions.values()} for s in device.all_services}
        emit({"device": summary(device), "actions": actions})
    elif o.command == "call":
        device = await device_at(o.location)
        args = dict(a.split("=", 1) for a in o.args)
        emit({"result": await call(device, o.service, o.action, args)})
    elif o.command == "subscribe":
        device = await device_at(o.location)
        events = Events(o.listen)
        await events.start()
        try:
            emit(await events.subscribe(device, o.service, o.timeout))
            await asyncio.sleep(o.seconds if o.seconds is not None else float("inf"))
        finally:
            await events.stop()
    elif o.command == "browse":
        emit(await browse(o.location, o.min_items, o.timeout))
    elif o.command == "session":
        await session(o.location, o.listen)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("discover")
    d.add_argument("--st", default=RENDERER)
    d.add_argument("--timeout", type=float, default=10, help="give up after S seconds")
    d.add_argument("--mx", type=int, default=1, help="the M-SEARCH's MX: answers may wait up to N s (default 1)")
    d.add_argument("--repeat", type=float, default=1, help="search again every S s until answered (0: once)")
    d.add_argument("--first", action="store_true", help="stop at the first answer")
    sub.add_parser("describe").add_argument("location")
    c = sub.add_parser("call")
    c.add_argument("location"); c.add_argument("service"); c.add_argument("action"); c.add_argument("args", nargs="*")
    s = sub.add_parser("subscribe")
    s.add_argument("location"); s.add_argument("service")
    s.add_argument("--seconds", type=float, help="stop after S seconds (default: until killed)")
    s.add_argument("--timeout", type=int, default=300, help="subscription TIMEOUT asked for, renewed halfway")
    b = sub.add_parser("browse")
    b.add_argument("location")
    b.add_argument("--min-items", type=int, default=0, help="browse again until at least N items are listed")
    b.add_argument("--timeout", type=float, default=60, help="…for at most S seconds")
    ss = sub.add_parser("session")
    ss.add_argument("location")
    for q in (s, ss):
        q.add_argument("--listen", default="127.0.0.1", help="address of the event callback server")
    o = p.parse_args()
    try:
        asyncio.run(run(o))
    except Failure as e:
        emit({"error": e.code, "description": e.description})
        sys.exit(e.status)
    except (UpnpError, OSError, asyncio.TimeoutError) as e:
        emit({"error": None, "description": f"{type(e).__name__}: {e}"})
        sys.exit(2)
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass


if __name__ == "__main__":
    main()
