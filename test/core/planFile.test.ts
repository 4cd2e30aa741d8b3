import assert from 'node:assert/strict';
import { MAX_PLAN_FILE_ATTEMPTS, firstFreePlanFileName, isoLocalDate, planFileName, planSlug, slugify } from '../../src/core/planFile';

describe('plan file naming', () => {
  const day = new Date(2026, 0, 5, 23, 59); // local time

  it('slugs are readable lower-case ASCII', () => {
    assert.equal(slugify('Add OAuth login (GitHub) — v2!'), 'add-oauth-login-github-v2');
    assert.equal(slugify('Crème brûlée'), 'creme-brulee');
    assert.equal(slugify('!!!'), 'plan');
    const long = slugify('word '.repeat(40));
    assert.ok(long.length <= 60 && !long.endsWith('-'), long);
  });

  it('names a plan after its first heading, else the title, else its first line', () => {
    assert.equal(planSlug('intro\n# Plan: Migrate the DB\nsteps'), 'migrate-the-db');
    assert.equal(planSlug('no heading here\nmore', 'ultraplan: Fix the login bug'), 'fix-the-login-bug');
    assert.equal(planSlug('First line wins\nsecond'), 'first-line-wins');
    assert.equal(planSlug('', undefined), 'plan');
  });

  it('skips headings that name no plan in particular, so saved plans can be told apart', () => {
    assert.equal(planSlug('# Implementation Plan\n\n## Goal\n', 'Add OAuth login'), 'add-oauth-login');
    assert.equal(planSlug('# Implementation Plan\n\n## Add OAuth login with GitHub\n'), 'add-oauth-login-with-github');
    assert.equal(planSlug('# Plan (demo): Add a dark theme (revision 2)\n'), 'add-a-dark-theme-revision-2');
    assert.equal(planSlug('# Proposed plan: Cache search results\n'), 'cache-search-results');
  });

  it('uses the local date as yyyy-mm-dd', () => {
    assert.equal(isoLocalDate(day), '2026-01-05');
    assert.equal(planFileName(day, 'x'), '2026-01-05-x.plan.md');
    assert.equal(planFileName(day, 'x', 3), '2026-01-05-x-3.plan.md');
  });

  it('never overwrites: picks -2, -3, … when names are taken', async () => {
    const taken = new Set(['2026-01-05-x.plan.md', '2026-01-05-x-2.plan.md']);
    assert.equal(await firstFreePlanFileName(day, 'x', (n) => taken.has(n)), '2026-01-05-x-3.plan.md');
    assert.equal(await firstFreePlanFileName(day, 'y', async (n) => taken.has(n)), '2026-01-05-y.plan.md');
  });

  it('gives up with a clear message after the bound', async () => {
    await assert.rejects(
      firstFreePlanFileName(day, 'x', () => true),
      new RegExp(`More than ${MAX_PLAN_FILE_ATTEMPTS}`),
    );
  });
});
