"""Seeded articles of Cairn & Pine Outfitters, a fictional outdoor brand, and its voice guide.

The brand writes plainly and warmly; it avoids hype, stacked exclamation marks
and filler intensifiers. It also has idioms of its own that a generic style
checker takes for clichés: "trail magic", "hike your own hike" and
"pack it in, pack it out" are used on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    body: str

    @property
    def text(self) -> str:
        return f"{self.title}\n\n{self.body}"


BRAND = "Cairn & Pine Outfitters"
BRAND_IDIOMS = ("trail magic", "hike your own hike", "pack it in, pack it out")

ARTICLES: tuple[Article, ...] = (
    Article(
        "first-overnight",
        "Your first overnight on the ridge",
        "Nobody forgets their first night out. Pick a short loop, check the forecast twice, and hike your own "
        "hike: there is no prize for arriving first. Our new Ridgeline 40 pack is a revolutionary design that "
        "carries the load on your hips, not your shoulders. When a stranger at the trailhead offers you a cold "
        "drink, that is trail magic, and you will pass it on one day. It will be very cold after dark!!",
    ),
    Article(
        "stove-guide",
        "Choosing a stove for three seasons",
        "Canister stoves boil fast and weigh little, which makes them the best-in-class choice for most weekend "
        "trips. Liquid fuel works better in deep cold. Whatever you carry, pack it in, pack it out: that includes "
        "the empty canister. Test the stove at home first, because a broken igniter on a windy ridge is really "
        "no fun. Keep a lighter in your hip belt as a spare.",
    ),
    Article(
        "trail-angels",
        "A thank-you to the trail angels of the Cascade crossing",
        "Every season, volunteers leave water caches and fruit where the trail crosses the highway. That is trail "
        "magic at its best, and this year we are sponsoring the caches at three crossings. If you find one, take "
        "what you need and leave the rest for the next hiker. It is an absolutely unparalleled tradition!!",
    ),
    Article(
        "rain-layers",
        "Staying dry without overheating",
        "A rain shell that does not breathe turns a wet day into a damp one from the inside. Our Drizzle Shell "
        "uses a cutting-edge membrane and pit zips that you can open with one hand. Hike your own hike when the "
        "weather turns: slow down, vent early, and eat before you are hungry. It is extremely light, too.",
    ),
    Article(
        "leave-it-better",
        "Leave the campsite better than you found it",
        "Good campsites stay good because people treat them with care. Camp on durable ground, keep fires small "
        "or skip them, and pack it in, pack it out, every wrapper and every peel. Take a bag for the litter other "
        "people left behind; it is a world-class habit. Trail magic works both ways, and a clean site is a gift "
        "to the next group. See you out there!!",
    ),
)

# The batch variant: more articles, never given feedback, in which the same idioms recur.
MORE_ARTICLES: tuple[Article, ...] = (
    Article(
        "winter-hydration",
        "Drinking enough water in winter",
        "Cold air is dry air, and you lose more water than you think. Carry an insulated bottle upside down so the "
        "lid does not freeze. Someone once left a thermos of hot tea at the Pine Saddle shelter for us: trail "
        "magic on a grey day. It is really easy to forget to drink when you are not sweating.",
    ),
    Article(
        "solo-hiking",
        "Notes on hiking alone",
        "Solo hiking asks more of your planning and gives back more quiet. Leave your route with a friend and a "
        "turnaround time. Then hike your own hike: stop when you want, walk at your own pace. Our Beacon headlamp "
        "is a game-changing light for the hour after sunset.",
    ),
    Article(
        "bear-canisters",
        "Bear canisters, packed well",
        "A bear canister is bulky, so pack it first and build the load around it. Food, toothpaste and trash go "
        "inside. Pack it in, pack it out applies to the canister's contents too: nothing gets buried. It is very "
        "simple once you have done it twice.",
    ),
    Article(
        "trail-runners",
        "Trail runners or boots?",
        "Most of our staff hike in trail runners from May to October: they dry fast and weigh half as much as "
        "boots. Boots still earn their place on talus and snow. Hike your own hike and choose what your ankles "
        "trust. Our Switchback runner has an unparalleled grip on wet rock!!",
    ),
    Article(
        "shelter-etiquette",
        "Sharing a shelter",
        "Shelters are first come, first served, and there is always room for one more in the rain. Keep your gear "
        "in a tidy pile and your voice low after dark. The hiker who shares a stove with a stranger is making "
        "trail magic. Pack it in, pack it out, including the scraps from dinner.",
    ),
)
