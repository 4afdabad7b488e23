import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type {
  ResolvedVulnsQuery,
  ResolvedVulnsSource,
} from "../../../src/advisories/resolved-vulns-source.js";
import { createSecurityAdvisoryService } from "../../../src/advisories/security-advisory-service.js";
import type { Access, RequestContext } from "../../../src/core/context.js";
import { type DomainError, permissionDenied } from "../../../src/core/errors.js";
import { PageTokenCodec } from "../../../src/core/list.js";
import { isAncestorOrSelf } from "../../../src/core/uidp.js";
import { ResolvedVulnsRequestSchema } from "../../../src/gen/platform/advisory/v2/security_advisory_pb.js";
import { openStore } from "../../../src/storage/sql/open-store.js";
import type { Store } from "../../../src/storage/store.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-03-10T15:00:00Z");
const OWN = "1".repeat(40);
const OTHER = "2".repeat(40);
const REPO = `${OWN}/${"a".repeat(16)}`;
const REPO2 = `${OWN}/${"b".repeat(16)}`;
const FOREIGN = `${OTHER}/${"c".repeat(16)}`;

/** The caller holds every capability under OWN and nothing elsewhere. */
const access: Access = {
  has: async (scope) => isAncestorOrSelf(OWN, scope),
  async require(scope, caps) {
    if (!(await this.has(scope, caps))) throw permissionDenied(`no access to ${scope}`);
  },
  scopesWith: async () => ({ all: false, uids: [OWN] }),
};

const ctx: RequestContext = {
  requestId: "test",
  principal: { identityUid: "3".repeat(40), isAdmin: false, claims: {} },
  access,
  clock: { now: () => NOW },
  signal: new AbortController().signal,
};

/** A source answering from a fixed table, recording what it was asked. */
function tableSource(): ResolvedVulnsSource & { asked: ResolvedVulnsQuery[] } {
  const day = Date.parse("2026-03-08T00:00:00Z");
  const asked: ResolvedVulnsQuery[] = [];
  return {
    asked,
    async resolvedVulns(query) {
      asked.push(query);
      const vuln = {
        id: "CGA-2f3q-4c5v-8w9x",
        aliases: ["CVE-2025-10001"],
        severities: [
          {
            type: "CVSS_V3",
            vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H",
            baseScore: 9.8,
            level: "critical",
          },
        ],
      };
      const other = { id: `CVE-2026-${query.repoUid.slice(-1)}`, aliases: [], severities: [] };
      return [
        { day: day + 3_600_000, vulnerabilities: [vuln, other] }, // any time of the day counts for the day
        { day: day - 100 * DAY, vulnerabilities: [vuln] }, // outside the range: ignored
      ];
    },
  };
}

describe("SecurityAdvisoryService.ResolvedVulns", () => {
  let store: Store;
  before(async () => {
    store = await openStore({ sqlitePath: ":memory:" });
  });
  after(() => store.close());

  const service = (source: ResolvedVulnsSource) =>
    createSecurityAdvisoryService({
      store,
      pageTokens: new PageTokenCodec(Buffer.from("k"), { now: () => NOW }),
      resolvedVulns: source,
    });
  const request = (init: Parameters<typeof create<typeof ResolvedVulnsRequestSchema>>[1]) =>
    create(ResolvedVulnsRequestSchema, init);

  it("reports every day of the range, merges images, maps severities, defaults tags to latest", async () => {
    const source = tableSource();
    const res = await service(source).resolvedVulns(
      request({
        imageRefs: [{ repo: REPO }, { repo: REPO2, tags: ["1.2", "1.2"] }],
        startTime: timestampFromMs(Date.parse("2026-03-07T23:00:00Z")),
        endTime: timestampFromMs(Date.parse("2026-03-09T01:00:00Z")),
      }),
      ctx,
    );
    const reports = res.resolvedVulnsReports ?? [];
    assert.deepEqual(
      reports.map((r) => r.date),
      ["2026-03-07", "2026-03-08", "2026-03-09"].map((d) => timestampFromMs(Date.parse(`${d}T00:00:00Z`))),
    );
    assert.deepEqual(reports[0]?.resolvedVulns, []);
    assert.deepEqual(
      reports[1]?.resolvedVulns?.map((v) => v.id),
      ["CGA-2f3q-4c5v-8w9x", "CVE-2026-a", "CVE-2026-b"],
      "one entry per id across images",
    );
    assert.deepEqual(reports[1]?.resolvedVulns?.[0]?.cvssSeverities, [
      { type: 2, score: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", baseScore: 9.8 },
    ]);
    assert.deepEqual(
      source.asked.map((q) => [q.repoUid, q.tags]),
      [
        [REPO, ["latest"]],
        [REPO2, ["1.2"]],
      ],
    );
    assert.equal(source.asked[0]?.firstDay, Date.parse("2026-03-07T00:00:00Z"));
    assert.equal(source.asked[0]?.lastDay, Date.parse("2026-03-09T00:00:00Z"));
  });

  it("without times: the 31 days up to today", async () => {
    const res = await service(tableSource()).resolvedVulns(request({ imageRefs: [{ repo: REPO }] }), ctx);
    assert.equal(res.resolvedVulnsReports?.length, 31);
    assert.deepEqual(
      res.resolvedVulnsReports?.at(-1)?.date,
      timestampFromMs(Date.parse("2026-03-10T00:00:00Z")),
    );
  });

  it("refuses bad input and other organizations' repos before asking the source", async () => {
    const source = tableSource();
    const failure = async (init: Parameters<typeof request>[0]) => {
      try {
        await service(source).resolvedVulns(request(init), ctx);
      } catch (err) {
        const e = err as DomainError;
        return [e.code, e.details.fieldViolations?.[0]?.field ?? ""];
      }
      assert.fail("expected an error");
    };
    assert.deepEqual(await failure({}), [3, "image_refs"]);
    assert.deepEqual(await failure({ imageRefs: [{ repo: "not-a-uid" }] }), [3, "image_refs[0].repo"]);
    assert.deepEqual(
      await failure({
        imageRefs: [{ repo: REPO }],
        startTime: timestampFromMs(NOW + DAY),
        endTime: timestampFromMs(NOW),
      }),
      [3, "start_time"],
    );
    assert.deepEqual(
      await failure({ imageRefs: [{ repo: REPO }], startTime: timestampFromMs(NOW - 400 * DAY) }),
      [3, "start_time"],
    );
    assert.deepEqual(await failure({ imageRefs: [{ repo: REPO }, { repo: FOREIGN }] }), [7, ""]);
    assert.deepEqual(source.asked, [], "the source was never asked");
  });
});
