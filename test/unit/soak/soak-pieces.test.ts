import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { haproxyConfig, parseLogLine } from "../../soak/haproxy.js";
import { attributeFailures, undelivered } from "../../soak/soak-checks.js";
import type { AckPush, OpRecord } from "../../soak/soak-load.js";
import { quantile } from "../../soak/soak-report.js";

// The soak's own judgement: how it reads HAProxy's log, blames failures and finds missing deliveries.

describe("soak pieces", () => {
  it("reads its HAProxy log lines and nothing else", () => {
    assert.deepEqual(parseLogLine("soak|pull-by-tag-3-ab12cd.1|registry|r1|502|SH--"), {
      soakId: "pull-by-tag-3-ab12cd.1",
      frontend: "registry",
      server: "r1",
      status: 502,
      termination: "SH--",
    });
    assert.equal(parseLogLine("soak|-|api|r0|200|----")?.soakId, "");
    assert.equal(parseLogLine("[WARNING]  (1) : Server api_replicas/r1 is DOWN"), undefined);
  });

  it("checks every replica on /readyz, round-robin, behind each front", () => {
    const config = haproxyConfig([
      {
        name: "api",
        port: 8000,
        servers: [
          { name: "r0", port: 9000 },
          { name: "r1", port: 9001 },
        ],
      },
    ]);
    assert.match(config, /bind 127\.0\.0\.1:8000/);
    assert.match(config, /option httpchk GET \/readyz/);
    assert.match(config, /balance roundrobin/);
    assert.match(config, /retry-on conn-failure empty-response/);
    assert.match(config, /http-request disable-l7-retry if !METH_GET/);
    assert.match(config, /server r0 127\.0\.0\.1:9000 check\n\s+server r1 127\.0\.0\.1:9001 check/);
  });

  it("blames a failure on a kill only when the killed replica served it while it ran", () => {
    const failed = (requestId: string, start: number, end: number): OpRecord => ({
      kind: "pull-by-tag",
      start,
      end,
      ok: false,
      failure: { requestId, status: 502, message: "502" },
    });
    const log = {
      logById: new Map([
        ["a.1", { soakId: "a.1", frontend: "registry", server: "r1", status: 502, termination: "SH--" }],
        ["b.1", { soakId: "b.1", frontend: "registry", server: "r2", status: 502, termination: "SH--" }],
        ["g.1", { soakId: "g.1", frontend: "registry", server: "r1", status: 502, termination: "SH--" }],
        ["h.1", { soakId: "h.1", frontend: "registry", server: "r1", status: 502, termination: "SH--" }],
        ["i.1", { soakId: "i.1", frontend: "registry", server: "r1", status: 504, termination: "sH--" }],
      ]),
      notices: [],
    };
    const kills = [{ replica: "r1", killedAt: 1_000, readyAt: 6_000 }];
    const { byCause, unexplained } = attributeFailures(
      [
        failed("a.1", 900, 1_100), // on r1, killed while it ran
        failed("b.1", 900, 1_100), // on r2, alive: unexplained
        failed("c.1", 2_000, 2_100), // not logged, no kill while it ran: unexplained
        failed("d.1", 950, 1_050), // not logged, a kill while it ran
        { ...failed("e.1", 1_500, 1_600), failure: { requestId: "e.1", status: 0, message: "no answer" } },
        { ...failed("f.1", 2_500, 2_600), failure: { requestId: "f.1", status: 0, message: "no answer" } },
        failed("g.1", 1_040, 1_050), // sent to r1 40 ms after its kill, before the checks noticed
        failed("h.1", 2_600, 2_610), // sent to r1 1.6 s after its kill: the checks should have noticed
        failed("i.1", 1_040, 1_050), // after the kill, but HAProxy's own server timeout (s), not r1's end
      ],
      kills,
      log,
    );
    assert.equal(byCause.get("pull-by-tag: killed replica, in flight"), 2);
    // e.1 was never received, 500 ms after the kill: its client connection was cut; f.1 1.5 s after is not.
    assert.equal(byCause.get("pull-by-tag: killed replica, shared connection cut"), 1);
    assert.equal(byCause.get("pull-by-tag: killed replica, not yet out of rotation"), 1);
    assert.equal(byCause.get("pull-by-tag: unexplained"), 5);
    assert.equal(unexplained.length, 5);
    assert.match(unexplained[0] ?? "", /r2 502 SH--/);
  });

  it("finds pushes and changes no accepted delivery names", () => {
    const push: AckPush = { repo: "o/app", tag: "p1", digest: "sha256:aa", blobs: new Map(), ackAt: 0 };
    const delivery = (headers: Record<string, string>, body: unknown) => ({
      path: "/hook",
      headers,
      body: JSON.stringify(body),
      status: 200,
      arrivedAt: 0,
      remotePort: 0,
    });
    const pushed = delivery(
      { "ce-type": "dev.wharf.registry.push.v1", "ce-digest": "sha256:aa" },
      { body: { tag: "p1" } },
    );
    const created = delivery({ "ce-type": "t.created.v1", "ce-subject": "u1" }, {});
    assert.deepEqual(undelivered([push], [{ type: "t.created.v1", subject: "u1" }], [pushed, created]), []);
    assert.deepEqual(undelivered([push], [], [created]), ["push o/app:p1"]);
    assert.deepEqual(
      undelivered(
        [],
        [
          { type: "t.created.v1", subject: "u1" },
          { type: "t.created.v1", subject: "u1" },
        ],
        [created],
      ),
      ["t.created.v1 u1: 1 of 2 delivered"],
    );
  });

  it("takes quantiles by nearest rank", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(quantile(values, 0.5), 50);
    assert.equal(quantile(values, 0.99), 99);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });
});
