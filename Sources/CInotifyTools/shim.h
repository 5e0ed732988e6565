// inotifytools.h only forward-declares struct inotify_event; the kernel header defines it.
#include <sys/inotify.h>
#include <inotifytools/inotifytools.h>
