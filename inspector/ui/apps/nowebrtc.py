"""No WebRTC in MCP Apps: an app could send data to any host through a STUN or TURN server (a TURN server
on an origin it never declared received a tool result this way), and neither its Content-Security-Policy
nor the profile's request interceptor sees those packets: WebRTC opens its own UDP and TCP sockets.

Two guards:

- Chromium's flags (`FLAGS`, set by `engine.prepare`): WebRTC may use no UDP that is not proxied, and
  shows no local address.
- A script in every frame of every app page (`install(profile)`: a `QWebEngineScript` run at document
  creation in the main world, on sub-frames too, before any script of the app): every `RTC…` constructor of
  the window (`RTCPeerConnection`, `webkitRTCPeerConnection`, …) is replaced, for good, by one that throws
  `NotSupportedError` and says so on the console, which the page turns into an attempt in the Sandbox tab
  (`page.refusal_of`). A fresh frame's window would give a clean constructor (the script is not run in the
  initial `about:blank` document of an iframe), so the same is done to every frame's window before the app
  can hold it: the getters that hand one out (`contentWindow`, `contentDocument`) and every way of adding a
  frame to a document (`appendChild`, `innerHTML`, `document.write`, …, and `window[i]` after each) make the
  window safe first, in that frame's own realm as well.
"""

from __future__ import annotations

from typing import Any

FLAGS = ("--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
         "--webrtc-ip-handling-policy=disable_non_proxied_udp")
SAID = "Refused to use WebRTC"  # how the script's console line starts (page.refusal_of reads it)

SCRIPT = r"""
(() => {
  'use strict';
  const say = console.error.bind(console);
  const RTC = /^(webkit)?RTC/;
  const lock = (O, target, name, descriptor) => {
    try { O.defineProperty(target, name, Object.assign({configurable: false, enumerable: false}, descriptor)); }
    catch (e) { /* already locked: this realm is guarded */ }
  };
  const install = (w) => {
    let O;
    try { O = w.Object; if (!O) return; } catch (e) { return; }  // another origin: its own script guards it
    for (const name of O.getOwnPropertyNames(w)) {
      if (!RTC.test(name)) continue;
      const refuse = function () {
        say('%(said)s (' + name + '): WebRTC is not available to MCP Apps');
        throw new w.DOMException('WebRTC is not available to MCP Apps', 'NotSupportedError');
      };
      lock(O, w, name, {value: refuse, writable: false});
    }
    const frames = () => { try { for (let i = 0; i < w.length; i++) install(w[i]); } catch (e) { /* gone */ } };
    const getter = (proto, prop, windowOf) => {
      const d = proto && O.getOwnPropertyDescriptor(proto, prop);
      if (!d || !d.get || !d.configurable) return;
      const get = d.get;
      lock(O, proto, prop, {get: function () { const v = get.call(this); if (v) install(windowOf(v)); return v; }});
    };
    for (const C of [w.HTMLIFrameElement, w.HTMLFrameElement, w.HTMLObjectElement]) {
      if (!C) continue;
      getter(C.prototype, 'contentWindow', (v) => v);
      getter(C.prototype, 'contentDocument', (v) => v.defaultView);
    }
    const after = (proto, names) => {
      for (const n of names) {
        const d = proto && O.getOwnPropertyDescriptor(proto, n);
        if (!d || !d.configurable) continue;
        if (typeof d.value === 'function') {
          const f = d.value;
          const wrapped = function (...a) { try { return f.apply(this, a); } finally { frames(); } };
          lock(O, proto, n, {writable: false, value: wrapped});
        } else if (d.set) {
          const set = d.set;
          lock(O, proto, n, {get: d.get, set: function (v) { try { set.call(this, v); } finally { frames(); } }});
        }
      }
    };
    after(w.Node && w.Node.prototype, ['appendChild', 'insertBefore', 'replaceChild']);
    after(w.Element && w.Element.prototype, ['append', 'prepend', 'after', 'before', 'replaceWith',
      'replaceChildren', 'insertAdjacentElement', 'insertAdjacentHTML', 'setHTMLUnsafe', 'setHTML', 'moveBefore',
      'innerHTML', 'outerHTML']);
    after(w.CharacterData && w.CharacterData.prototype, ['after', 'before', 'replaceWith']);
    after(w.DocumentType && w.DocumentType.prototype, ['after', 'before', 'replaceWith']);
    after(w.Document && w.Document.prototype, ['write', 'writeln', 'append', 'prepend', 'replaceChildren',
      'execCommand', 'moveBefore']);
    after(w.ShadowRoot && w.ShadowRoot.prototype, ['innerHTML', 'setHTMLUnsafe', 'setHTML']);
    after(w.Range && w.Range.prototype, ['insertNode', 'surroundContents']);
    try { new w.MutationObserver(frames).observe(w.document, {childList: true, subtree: true}); } catch (e) { }
  };
  install(window);
})();
""".replace("%(said)s", SAID)


def install(profile: Any) -> None:
    """The script in every frame of every page of `profile` (a QWebEngineProfile)."""
    from PySide6.QtWebEngineCore import QWebEngineScript

    script = QWebEngineScript()
    script.setName("spyglass-no-webrtc")
    script.setSourceCode(SCRIPT)
    script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
    script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld)
    script.setRunsOnSubFrames(True)
    profile.scripts().insert(script)
