import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import { throttlePokes } from "../../../src/events/poke-throttle.js";

describe("throttlePokes", () => {
  // The throttle's clock and timers, moved on by the test: `elapse` runs what falls due meanwhile.
  let time = 0;
  const now = () => time;
  const elapse = (ms: number) => {
    time += ms;
    mock.timers.tick(ms);
  };
  beforeEach(() => {
    time = 1_000_000;
    mock.timers.enable({ apis: ["setTimeout"] });
  });
  afterEach(() => mock.timers.reset());

  it("forwards the first poke at once and one more for all those within the interval", () => {
    const forwarded: number[] = [];
    const started = now();
    const pokes = throttlePokes(() => forwarded.push(now() - started), 300, now);
    for (let i = 0; i < 5; i++) pokes.poke();
    assert.equal(forwarded.length, 1, "the first goes out at once");
    elapse(100);
    pokes.poke();
    assert.equal(forwarded.length, 1, "later ones within the interval are held");
    elapse(400);
    assert.equal(forwarded.length, 2, "one held poke goes out when the interval ends");
    assert.ok((forwarded[1] ?? 0) >= 290, `not before the interval ended (${forwarded[1]} ms)`);
    elapse(400);
    assert.equal(forwarded.length, 2, "and nothing more without new pokes");
    pokes.poke();
    assert.equal(forwarded.length, 3, "a poke after a quiet interval goes out at once");
  });

  it("cancel drops the held poke", () => {
    let forwarded = 0;
    const pokes = throttlePokes(() => forwarded++, 100, now);
    pokes.poke();
    pokes.poke();
    pokes.cancel();
    elapse(250);
    assert.equal(forwarded, 1, "only the first");
  });
});
