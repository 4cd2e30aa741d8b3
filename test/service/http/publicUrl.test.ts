// --public-url: an https origin (http only on a loopback name), nothing after it.
import { strict as assert } from 'node:assert';
import { parsePublicUrl, PublicUrlError } from '../../../src/service/http/publicUrl';

describe('--public-url', () => {
  it('gives the origin, normalised', () => {
    assert.equal(parsePublicUrl('https://Plans.Example.com'), 'https://plans.example.com');
    assert.equal(parsePublicUrl('https://plans.example.com/'), 'https://plans.example.com');
    assert.equal(parsePublicUrl('https://plans.example.com:443/'), 'https://plans.example.com');
    assert.equal(parsePublicUrl('https://plans.example.com:8443'), 'https://plans.example.com:8443');
    assert.equal(parsePublicUrl('http://127.0.0.1:8787'), 'http://127.0.0.1:8787');
    assert.equal(parsePublicUrl('http://localhost:9000/'), 'http://localhost:9000');
    assert.equal(parsePublicUrl('http://[::1]:9000'), 'http://[::1]:9000');
  });

  const refused: Array<[string, RegExp]> = [
    ['plans.example.com', /takes an origin/],
    ['', /takes an origin/],
    ['http://plans.example.com', /must be https/],
    ['http://10.0.0.5:8787', /must be https/],
    ['ftp://plans.example.com', /must be https/],
    ['javascript:alert(1)', /must be https/],
    ['https://user:pw@plans.example.com', /user or password/],
    ['https://plans.example.com/plans', /without a path/],
    ['https://plans.example.com/?a=1', /without a path, query or fragment/],
    ['https://plans.example.com/#x', /without a path, query or fragment/],
    ['https://plans.example.com?', /without a path, query or fragment/],
  ];
  for (const [value, message] of refused) {
    it(`refuses ${JSON.stringify(value)}`, () => {
      assert.throws(
        () => parsePublicUrl(value),
        (err: unknown) => err instanceof PublicUrlError && message.test(err.message),
      );
    });
  }
});
