import t from 'tap';
import { networkOf } from '../../src/lib/ip-network.js';

t.test('IPv4 counts whole, IPv6 by its /64, IPv4-mapped IPv6 as the IPv4 address', async (t) => {
  t.equal(networkOf('203.0.113.7'), '203.0.113.7');
  t.equal(networkOf('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  t.equal(networkOf('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'every address of the /64 is one network');
  t.not(networkOf('2001:db8:1:3::1'), networkOf('2001:db8:1:2::1'), 'the next /64 is another');
  t.equal(networkOf('::ffff:203.0.113.7'), '203.0.113.7');
  t.equal(networkOf('::FFFF:cb00:7107'), '203.0.113.7', 'mapped, written in hex');
  // uWebSockets.js names the connection's address this way, an IPv4 client of a dual-stack socket mapped.
  t.equal(networkOf('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
  t.equal(networkOf('0000:0000:0000:0000:0000:0000:0000:0001'), '0:0:0:0::/64');
});

t.test('any textual form of an IPv6 network gives one key', async (t) => {
  const forms = ['2001:db8::1', '2001:0DB8:0000:0000::0001', '2001:db8:0:0:0:0:0:1', '2001:db8::5%eth0', '2001:db8::192.0.2.1', '2001:db8::'];
  for (const form of forms) t.equal(networkOf(form), '2001:db8:0:0::/64', form);
  t.equal(networkOf('::'), '0:0:0:0::/64');
  t.equal(networkOf('1::'), '1:0:0:0::/64');
});

t.test('what is no address is its own key', async (t) => {
  t.equal(networkOf(''), '');
  t.equal(networkOf('unknown'), 'unknown');
});
