"""Prints watchdog's events as tab-separated lines, for scripts/peers/compare.py."""
import sys
import time

from watchdog.events import FileSystemEventHandler
from watchdog.observers.inotify import InotifyObserver
from watchdog.observers.polling import PollingObserver


class Printer(FileSystemEventHandler):
    def on_any_event(self, event):
        fields = [event.event_type, "1" if event.is_directory else "0", event.src_path]
        if getattr(event, "dest_path", ""):
            fields.append(event.dest_path)
        print("\t".join(fields), flush=True)


observer = InotifyObserver() if sys.argv[1] == "inotify" else PollingObserver(timeout=0.1)
observer.schedule(Printer(), sys.argv[2], recursive=True)
observer.start()
print("READY", flush=True)
try:
    while observer.is_alive():
        observer.join(1)
except KeyboardInterrupt:
    pass
