import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { Cancellation, clientCancelled, deadlineExceeded } from "../../../src/core/cancellation.js";

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
});
