/**
 * The waiting list offered as the family names more people than there are places left (the add button's
 * data-places-left, set only when the event has a waiting list): the join form, hidden until then, is shown and
 * filled in from the registration form (name, email, mobile; the places wanted follow the rows until typed by
 * hand), and a note above the rows says so. Back within the places left, it is hidden again. Without script,
 * the server offers it when such a registration is posted.
 */
export function offerWaitlistPastPlacesLeft(form: HTMLFormElement): () => void {
  const placesLeft = Number(form.querySelector('#add-attendee')?.getAttribute('data-places-left'));
  const section = document.querySelector<HTMLElement>('#waitlist');
  const notice = form.querySelector<HTMLElement>('#over-places');
  if (!placesLeft || !section || !notice) return () => {};
  const shownByServer = !section.hidden;
  const field = (id: string) => section.querySelector<HTMLInputElement>(`#${id}`);
  const places = field('waitlist-places');
  let placesTyped = false;
  places?.addEventListener('input', () => {
    placesTyped = true;
  });
  const copy = (from: string, to: string) => {
    const source = form.querySelector<HTMLInputElement>(`#${from}`);
    const target = field(to);
    if (source && target && target.value === '') target.value = source.value;
  };

  return () => {
    const people = form.querySelectorAll('.attendee').length;
    if (people <= placesLeft) {
      if (!shownByServer) section.hidden = true;
      notice.replaceChildren();
      return;
    }
    copy('name', 'waitlist-name');
    copy('email', 'waitlist-email');
    copy('mobile', 'waitlist-mobile');
    if (places && !placesTyped) places.value = String(people);
    section.hidden = false;
    const left = placesLeft === 1 ? 'only 1 place is left' : `only ${placesLeft} places are left`;
    const text = `You are adding ${people} people, but ${left}. Register ${placesLeft === 1 ? '1 person' : `up to ${placesLeft}`}, or join the waiting list below for all ${people}.`;
    let line = notice.querySelector('p');
    if (!line) {
      line = document.createElement('p');
      line.className = 'notice';
      notice.append(line);
    }
    if (line.textContent !== text) line.textContent = text;
  };
}
