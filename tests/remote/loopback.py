"""What the loopback test servers share: they die with the test that
started them, and they tell it their port on stdout (`PORT <n>`)."""
import os
import threading
import time
from http.server import ThreadingHTTPServer


def exit_with_parent():
    """Exit when the process that started this one exits."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def announce(port):
    """Tell the starting test where we listen."""
    print("PORT %d" % port, flush=True)


def serve(handler, port=0):
    """Serve `handler` on 127.0.0.1:`port` (0: a free one) until killed."""
    exit_with_parent()
    srv = ThreadingHTTPServer(("127.0.0.1", port), handler)
    srv.daemon_threads = True
    announce(srv.server_address[1])
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
