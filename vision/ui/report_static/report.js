(function(){
  var boxes=[].slice.call(document.querySelectorAll('#filters input'));
  var shown=document.getElementById('shown');
  function apply(){
    var on=function(attr){return boxes.filter(function(b){return b.checked&&b.dataset[attr];})
      .map(function(b){return b.dataset[attr];});};
    var verdicts=on('verdict'),codes=on('code'),count=0,total=0;
    document.querySelectorAll('[data-move]').forEach(function(el){
      var own=el.dataset.codes?el.dataset.codes.split(' '):[];
      var visible=verdicts.indexOf(el.dataset.verdict)>=0&&
        (own.length===0||own.some(function(c){return codes.indexOf(c)>=0;}));
      el.classList.toggle('hidden',!visible);
      if(el.tagName==='ARTICLE'){total++;if(visible)count++;}
    });
    if(shown)shown.textContent=count+' of '+total+' moves shown';
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  var zoom=document.createElement('div');zoom.id='zoom';document.body.appendChild(zoom);
  zoom.addEventListener('click',function(){zoom.style.display='none';});
  document.querySelectorAll('figure img').forEach(function(img){img.addEventListener('click',function(){
    var big=new Image();big.src=img.src;big.alt=img.alt;
    if(img.dataset.zoom==='full')big.className='full';
    zoom.replaceChildren(big);zoom.style.display='block';});});
})();
