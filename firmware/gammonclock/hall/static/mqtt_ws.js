// A minimal MQTT 3.1.1 client over WebSocket (subprotocol "mqtt"), for the spectators' pages:
// it connects anonymously with a random client id and a clean session, subscribes to the given
// filters at QoS 0 (and to `snapshot` filters only for their retained messages: subscribed and
// at once unsubscribed), pings, and reconnects with a growing pause. It publishes nothing. Every
// byte from the network is bounded: a packet longer than MQTT_MAX_PACKET, a length field of
// more than 4 bytes, a topic that is not UTF-8 or runs past its packet, an unknown packet type,
// a text frame or a buffer beyond MQTT_MAX_BUFFER closes the connection (and it reconnects).
"use strict";

const MQTT_MAX_PACKET = 65536;       // a `live` message of views is at most 32 KiB
const MQTT_MAX_BUFFER = 262144;      // bytes read and not yet a whole packet
const MQTT_KEEPALIVE_S = 60;
const MQTT_RETRY_MS = [1000, 30000]; // the pause before a reconnect, from and to

function mqttSubscriber({ url, filters, snapshot = [], onMessage, onStatus }) {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let socket = null, buffer = new Uint8Array(0), pinger = null, retry = MQTT_RETRY_MS[0];
  let stopped = false;

  const utf8 = (text) => { const b = encoder.encode(text); return [b.length >> 8, b.length & 255, ...b]; };
  function packet(first, body) {
    const length = [];
    let n = body.length;
    do { let digit = n % 128; n = Math.floor(n / 128); if (n > 0) digit |= 128; length.push(digit); } while (n > 0);
    return new Uint8Array([first, ...length, ...body]);
  }
  function send(bytes) { if (socket && socket.readyState === WebSocket.OPEN) socket.send(bytes); }
  function clientId() {
    const bytes = new Uint8Array(8);
    crypto.getRandomValues(bytes);
    return "spectator-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function fail(why) {
    onStatus("lost", why);
    if (socket) { try { socket.close(); } catch (err) { /* closed already */ } }
  }

  function open() {
    if (stopped) return;
    buffer = new Uint8Array(0);
    onStatus("connecting");
    try {
      socket = new WebSocket(url, ["mqtt"]);
    } catch (err) {
      onStatus("lost", String(err));
      later();
      return;
    }
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      const body = [...utf8("MQTT"), 4, 0x02, MQTT_KEEPALIVE_S >> 8, MQTT_KEEPALIVE_S & 255,
                    ...utf8(clientId())];
      send(packet(0x10, body));                       // CONNECT, clean session, no account
    };
    socket.onmessage = (event) => {
      if (!(event.data instanceof ArrayBuffer)) { fail("a text frame"); return; }
      const data = new Uint8Array(event.data);
      if (buffer.length + data.length > MQTT_MAX_BUFFER) { fail("too much data"); return; }
      const joined = new Uint8Array(buffer.length + data.length);
      joined.set(buffer);
      joined.set(data, buffer.length);
      buffer = joined;
      try { readPackets(); } catch (err) { fail(String(err && err.message || err)); }
    };
    socket.onclose = () => {
      if (pinger) { clearInterval(pinger); pinger = null; }
      socket = null;
      onStatus("lost", "closed");
      later();
    };
    socket.onerror = () => { /* onclose follows */ };
  }

  function later() {
    if (stopped) return;
    const wait = retry * (0.75 + Math.random() / 2);
    retry = Math.min(MQTT_RETRY_MS[1], retry * 2);
    setTimeout(open, wait);
  }

  // Whole packets off the front of the buffer; a partial one waits for more bytes.
  function readPackets() {
    while (buffer.length >= 2) {
      let length = 0, multiplier = 1, at = 1, done = false;
      while (at < buffer.length && at <= 4) {
        const digit = buffer[at++];
        length += (digit & 127) * multiplier;
        multiplier *= 128;
        if ((digit & 128) === 0) { done = true; break; }
      }
      if (!done) {
        if (at > 4) throw new Error("a length field of more than 4 bytes");
        return;                                       // the length itself is not all here
      }
      if (length > MQTT_MAX_PACKET) throw new Error(`a packet of ${length} bytes`);
      if (buffer.length < at + length) return;
      const first = buffer[0];
      const body = buffer.subarray(at, at + length);
      buffer = buffer.slice(at + length);
      take(first, body);
    }
  }

  function take(first, body) {
    const type = first >> 4;
    if (type === 2) {                                 // CONNACK
      if (body.length !== 2) throw new Error("a bad CONNACK");
      if (body[1] !== 0) throw new Error(`refused by the broker (${body[1]})`);
      const subscribe = [0, 1];
      for (const filter of filters) subscribe.push(...utf8(filter), 0);
      send(packet(0x82, subscribe));
      if (snapshot.length) {
        // The broker sends a filter's retained messages at the SUBSCRIBE, before it reads the
        // UNSUBSCRIBE: one look at every table, then only the stream of `filters`.
        const look = [0, 2], leave = [0, 3];
        for (const filter of snapshot) { look.push(...utf8(filter), 0); leave.push(...utf8(filter)); }
        send(packet(0x82, look));
        send(packet(0xa2, leave));
      }
      retry = MQTT_RETRY_MS[0];
      pinger = setInterval(() => send(new Uint8Array([0xc0, 0])), MQTT_KEEPALIVE_S * 500);
      onStatus("connected");
    } else if (type === 9) {                          // SUBACK
      if (body.length < 3 || Array.from(body.subarray(2)).some((code) => code === 0x80)) {
        throw new Error("the subscription was refused");
      }
    } else if (type === 3) {                          // PUBLISH
      const qos = (first >> 1) & 3;
      if (body.length < 2) throw new Error("a PUBLISH without a topic");
      const topicLength = (body[0] << 8) | body[1];
      let at = 2 + topicLength;
      if (qos > 1 || at + (qos ? 2 : 0) > body.length) throw new Error("a bad PUBLISH");
      const topic = decoder.decode(body.subarray(2, at));
      if (qos === 1) {                                // never asked for, answered all the same
        send(new Uint8Array([0x40, 2, body[at], body[at + 1]]));
        at += 2;
      }
      onMessage(topic, body.subarray(at), (first & 1) === 1);
    } else if (type === 11) {                         // UNSUBACK
      /* the snapshot is in */
    } else if (type === 13) {                         // PINGRESP
      /* alive */
    } else {
      throw new Error(`an unexpected packet (type ${type})`);
    }
  }

  open();
  return { stop() { stopped = true; if (socket) socket.close(); } };
}
