import assert from 'node:assert/strict';
import { MAX_ATTACH_INPUT_CHARS, parseAttachTarget, sameServerUrl, sameSessionId, type AttachTarget } from '../../src/core/attachTarget';

const ID = 'session_01AbCdEf-gh_IJ';
const CSE = 'cse_01AbCdEf-gh_IJ';

function target(input: string): AttachTarget {
  const result = parseAttachTarget(input);
  assert.ok(result.ok, `expected ${JSON.stringify(input)} to parse, got: ${result.ok ? '' : result.error}`);
  return result.target;
}

function refusal(input: string): string {
  const result = parseAttachTarget(input);
  assert.ok(!result.ok, `expected ${JSON.stringify(input.slice(0, 80))} to be refused, got ${JSON.stringify(result.ok && result.target)}`);
  return result.error;
}

describe('attach target parser', () => {
  describe('Claude Code on the web links', () => {
    it('reads https://claude.ai/code/session_…', () => {
      assert.deepEqual(target(`https://claude.ai/code/${ID}`), { backend: 'claude-web', sessionId: ID });
    });

    it('takes the cse_ form as the same session, in its link form', () => {
      assert.deepEqual(target(`https://claude.ai/code/${CSE}`), { backend: 'claude-web', sessionId: ID });
    });

    it('ignores a query, a fragment, a trailing slash and surrounding whitespace', () => {
      assert.deepEqual(target(`  https://claude.ai/code/${ID}/?tab=plan#top \n`), { backend: 'claude-web', sessionId: ID });
      assert.deepEqual(target(`https://www.claude.ai/code/${ID}`), { backend: 'claude-web', sessionId: ID });
    });

    it('reads a session URL on the service API as claude-web', () => {
      assert.deepEqual(target(`https://api.anthropic.com/v1/code/sessions/${CSE}`), { backend: 'claude-web', sessionId: ID });
    });

    it('refuses claude.ai links that name no session, or over plain http', () => {
      assert.match(refusal('https://claude.ai/code'), /names no session/);
      assert.match(refusal('https://claude.ai/chat/abc'), /names no session/);
      assert.match(refusal(`https://claude.ai/code/${ID}/extra`), /names no session/);
      assert.match(refusal(`http://claude.ai/code/${ID}`), /https:\/\//);
    });
  });

  describe('Jules links and ids', () => {
    const JULES = '14550388554331055113';

    it('reads https://jules.google.com/session/<digits> and a bare Jules id (digits)', () => {
      assert.deepEqual(target(`https://jules.google.com/session/${JULES}`), { backend: 'jules', sessionId: JULES });
      assert.deepEqual(target(`https://jules.google.com/session/${JULES}/?tab=plan`), { backend: 'jules', sessionId: JULES });
      assert.deepEqual(target(` ${JULES} `), { backend: 'jules', sessionId: JULES });
    });

    it('refuses Jules links that name no session, a non-numeric id, or plain http', () => {
      assert.match(refusal('https://jules.google.com/session'), /names no session/);
      assert.match(refusal('https://jules.google.com/session/abc'), /names no session/);
      assert.match(refusal(`https://jules.google.com/session/${JULES}/x`), /names no session/);
      assert.match(refusal('https://jules.google.com/settings'), /names no session/);
      assert.match(refusal(`http://jules.google.com/session/${JULES}`), /https:\/\//);
      assert.match(refusal('1'.repeat(41)), /neither a session id/);
    });
  });

  describe('server URLs', () => {
    it('reads the current wire, the older one and a tail such as /events', () => {
      const expected = { backend: 'server', serverUrl: 'http://127.0.0.1:8787', sessionId: ID };
      assert.deepEqual(target(`http://127.0.0.1:8787/v1/code/sessions/${CSE}`), expected);
      assert.deepEqual(target(`http://127.0.0.1:8787/v1/sessions/${ID}`), expected);
      assert.deepEqual(target(`http://127.0.0.1:8787/v1/code/sessions/${ID}/events?sort_order=asc`), expected);
    });

    it('keeps a path prefix before /v1/ (a server behind a proxy)', () => {
      assert.deepEqual(target(`https://plans.example.com/ultraplan/v1/code/sessions/${ID}`), {
        backend: 'server',
        serverUrl: 'https://plans.example.com/ultraplan',
        sessionId: ID,
      });
    });

    it('lower-cases the host through the URL, not the id', () => {
      const t = target(`HTTP://LOCALHOST:9/v1/sessions/${ID}`);
      assert.deepEqual(t, { backend: 'server', serverUrl: 'http://localhost:9', sessionId: ID });
    });

    it('refuses a URL with no session path', () => {
      assert.match(refusal('http://127.0.0.1:8787/'), /No session id/);
      assert.match(refusal('http://127.0.0.1:8787/v1/code/sessions'), /No session id/);
      assert.match(refusal(`https://example.com/${ID}`), /No session id/);
    });
  });

  describe('bare ids', () => {
    it('reads session_ and cse_ ids as a session on the current backend', () => {
      assert.deepEqual(target(ID), { backend: 'current', sessionId: ID });
      assert.deepEqual(target(CSE), { backend: 'current', sessionId: ID });
      assert.deepEqual(target('session_3f2a9c0e41b84d7b9a1e0c6d5b4a3f21'), {
        backend: 'current',
        sessionId: 'session_3f2a9c0e41b84d7b9a1e0c6d5b4a3f21',
      });
    });

    it('refuses ids outside the alphabet, empty or overlong ids', () => {
      assert.match(refusal('session_'), /not a session id/);
      assert.match(refusal('session_abc.def'), /not a session id/);
      assert.match(refusal('session_abc/../x'), /not a session id/);
      assert.match(refusal(`session_${'a'.repeat(201)}`), /at most 200/);
      assert.match(refusal('session_ａｂｃ'), /not a session id/); // full-width letters
      assert.match(refusal('session_abc\u200b'), /not a session id/); // zero-width space
      assert.match(refusal('sess_abc'), /neither a session id/);
      assert.match(refusal('abc123'), /neither a session id/);
    });
  });

  describe('hostile input', () => {
    it('refuses every scheme but http and https', () => {
      for (const link of [
        `javascript:alert(1)//${ID}`,
        `file:///v1/sessions/${ID}`,
        `data:text/html,${ID}`,
        `vscode://ultraplan/v1/sessions/${ID}`,
        `command:ultraplan.approve?${ID}`,
        `ftp://host/v1/sessions/${ID}`,
      ]) {
        assert.match(refusal(link), /Only http:\/\/ and https:\/\//, link);
      }
    });

    it('refuses credentials in the URL, naming where a token belongs', () => {
      assert.match(refusal(`http://user:secret@127.0.0.1:8787/v1/code/sessions/${ID}`), /user name or password/);
      assert.match(refusal(`https://token@claude.ai/code/${ID}`), /user name or password/);
    });

    it('refuses overlong input before looking at it', () => {
      const long = `https://claude.ai/code/${ID}?${'x'.repeat(MAX_ATTACH_INPUT_CHARS)}`;
      assert.match(refusal(long), new RegExp(`at most ${MAX_ATTACH_INPUT_CHARS}`));
    });

    it('refuses control characters, spaces and quotes inside', () => {
      assert.match(refusal(`https://claude.ai/code/${ID}\r\nX-Injected: 1`), /control characters/);
      assert.match(refusal(`https://claude.ai/code/${ID}\u0000`), /control characters/);
      assert.match(refusal(`https://claude.ai/code/"${ID}"`), /quotes/);
      assert.match(refusal(`https://claude.ai/code/ ${ID}`), /spaces/);
      assert.match(refusal(`<https://claude.ai/code/${ID}>`), /quotes/);
    });

    it('decodes %-escapes once and then checks the id: an escaped slash or dot is no id', () => {
      assert.match(refusal('http://127.0.0.1:8787/v1/sessions/session_a%2F..%2Fb'), /not a session id/);
      assert.match(refusal('http://127.0.0.1:8787/v1/sessions/session_%E0%A4%A'), /malformed %-escape/);
      assert.deepEqual(target(`http://127.0.0.1:8787/v1/sessions/${ID.replace('A', '%41')}`).sessionId, ID);
    });

    it('takes a look-alike host for what it is: a server, never Claude Code on the web', () => {
      assert.match(refusal(`https://claude.ai.evil.example/code/${ID}`), /No session id/);
      assert.deepEqual(target(`https://claude.ai.evil.example/v1/code/sessions/${ID}`), {
        backend: 'server',
        serverUrl: 'https://claude.ai.evil.example',
        sessionId: ID,
      });
    });

    it('refuses text that is not a URL at all', () => {
      assert.match(refusal(''), /Paste a session link/);
      assert.match(refusal('   '), /Paste a session link/);
      assert.match(refusal('http://'), /not a valid link/);
      assert.match(refusal('http://[::1/v1/sessions/session_x'), /not a valid link/);
    });
  });

  it('compares ids across their two forms and server addresses loosely', () => {
    assert.ok(sameSessionId(ID, CSE));
    assert.ok(!sameSessionId(ID, 'session_other'));
    assert.ok(sameServerUrl('http://127.0.0.1:8787/', 'http://127.0.0.1:8787'));
    assert.ok(sameServerUrl('http://LOCALHOST:8787', 'http://localhost:8787'));
    assert.ok(!sameServerUrl('http://127.0.0.1:8787', 'http://127.0.0.1:8788'));
  });
});
