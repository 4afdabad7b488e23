import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { withIdFilter } from "../../../src/core/v1-face.js";
import { UIDPFilterSchema } from "../../../src/gen/platform/common/v2/uidp_pb.js";

const A = "a".repeat(40);
const B = "b".repeat(40);

describe("a v1 id filter as a v2 UIDPFilter", () => {
  it("without an id, answers the uidp filter as given (or an empty one)", () => {
    assert.deepEqual(withIdFilter(undefined, "")?.ids, []);
    const given = create(UIDPFilterSchema, { childrenOf: A });
    assert.equal(withIdFilter(given, "")?.childrenOf, A);
  });

  it("with an id, narrows to exactly it, keeping the other uidp conditions", () => {
    const filter = withIdFilter(create(UIDPFilterSchema, { descendantsOf: A }), `${A}/0123456789abcdef`);
    assert.deepEqual(filter?.ids, [`${A}/0123456789abcdef`]);
    assert.equal(filter?.descendantsOf, A);
  });

  it("an id among uidp.ids narrows to it; an id outside them matches nothing", () => {
    assert.deepEqual(withIdFilter(create(UIDPFilterSchema, { ids: [A, B] }), B)?.ids, [B]);
    assert.equal(withIdFilter(create(UIDPFilterSchema, { ids: [A] }), B), undefined);
  });

  it("refuses an id that is not a uid, naming the request's field", () => {
    assert.throws(() => withIdFilter(undefined, "not a uid"), /Invalid argument: id:/);
    assert.throws(() => withIdFilter(undefined, "x/y", "group"), /Invalid argument: group:/);
  });

  it("never changes the request's filter", () => {
    const given = create(UIDPFilterSchema, { ids: [A, B] });
    withIdFilter(given, A);
    assert.deepEqual(given.ids, [A, B]);
  });
});
