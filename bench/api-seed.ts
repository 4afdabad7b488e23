// The data `bench:api` measures against: one organization holding `count` repositories, written
// straight through the store in transactions of 5,000.
import { newChildUid, newRootUid } from "../dist/core/uidp.js";
import type { startServer } from "../dist/server.js";

type Server = Awaited<ReturnType<typeof startServer>>;

/** Seeds the organization `bench` with `count` repos; returns its uid and the middle repo's uid. */
export async function seedRepos(server: Server, count: number): Promise<{ org: string; sampleUid: string }> {
  const org = newRootUid();
  const now = Date.now();
  await server.store.groups.insert({
    uid: org,
    name: "bench",
    description: "",
    verified: false,
    createTime: now,
    updateTime: now,
  });
  const started = Date.now();
  let sampleUid = "";
  for (let batch = 0; batch < count; batch += 5000) {
    await server.store.transaction(async (tx) => {
      for (let i = batch; i < Math.min(count, batch + 5000); i++) {
        const uid = newChildUid(org);
        if (i === Math.floor(count / 2)) sampleUid = uid;
        await tx.repos.insert({
          uid,
          groupUid: org,
          name: `repo-${i}`,
          description: "a benchmark repository",
          readme: "",
          createTime: now + i,
          updateTime: now + i,
        });
      }
    });
  }
  console.log(`seeded ${count} repos in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { org, sampleUid };
}
