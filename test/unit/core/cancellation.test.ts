import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  Cancellation,
  type ClientWatch,
  clientCancelled,
  deadlineExceeded,
} from "../../../src/core/cancellation.js";

describe("Cancellation", () => {
  it("is quiet until aborted; throwIfAborted then throws the reason, and the first reason wins", () => {
    const cancellation = new Cancellation();
    assert.equal(cancellation.aborted, false);
    cancellation.throwIfAborted();
    const deadline = deadlineExceeded();
    assert.equal(cancellation.abort(deadline), true, "the first abort counts");
    assert.equal(cancellation.abort(clientCancelled()), false, "a later one does not");
    assert.equal(cancellation.reason, deadline);
    assert.equal(deadline.code, Code.DeadlineExceeded);
    assert.throws(
      () => cancellation.throwIfAborted(),
      (err) => err === deadline,
    );
  });

  it("a signal asked for before the abort fires with the reason", () => {
    const cancellation = new Cancellation();
    const signal = cancellation.signal;
    assert.equal(cancellation.signal, signal, "one signal per call");
    let fired: unknown;
    signal.addEventListener("abort", () => {
      fired = signal.reason;
    });
    const gone = clientCancelled();
    cancellation.abort(gone);
    assert.equal(fired, gone);
    assert.equal(gone.code, Code.Canceled);
  });

  it("a signal asked for after the abort is already aborted with the reason", () => {
    const cancellation = new Cancellation();
    const gone = clientCancelled();
    cancellation.abort(gone);
    assert.equal(cancellation.signal.aborted, true);
    assert.equal(cancellation.signal.reason, gone);
  });

  it("a watched client is polled by every check, and listened to only once the signal is made", () => {
    let gone = false;
    let listening = 0;
    const cancellation = new Cancellation();
    const client: ClientWatch = {
      gone: () => gone,
      listen: () => {
        listening++;
      },
    };
    cancellation.watch(client);
    assert.equal(cancellation.aborted, false);
    assert.equal(listening, 0, "no listener while nobody holds the signal");
    const signal = cancellation.signal;
    assert.equal(listening, 1, "listening once the signal is made");
    assert.equal(cancellation.signal, signal);
    assert.equal(listening, 1, "and only once");
    gone = true;
    assert.throws(
      () => cancellation.throwIfAborted(),
      (err) => err instanceof Error && (err as { code?: Code }).code === Code.Canceled,
    );
    assert.equal(signal.aborted, true, "a poll that finds the client gone fires the signal");
  });

  it("a client gone before the signal is made: the signal is made aborted, with no listener", () => {
    let listening = 0;
    const cancellation = new Cancellation();
    cancellation.watch({ gone: () => true, listen: () => listening++ });
    assert.equal(cancellation.signal.aborted, true);
    assert.equal((cancellation.signal.reason as { code?: Code }).code, Code.Canceled);
    assert.equal(listening, 0);
  });
});
